import { errorCodes } from "../../../../generated/v1/error-codes.gen.ts";
import type { ErrorRenderer } from "../../http/middleware/errors.ts";
import { statusOf } from "../../http/jsonapi.ts";

/**
 * The tofu CLI prints only `errors[0].title` and `detail`, so both carry the whole message.
 * Refused run creations read as the CLI's own vocabulary (`invalid_document`).
 */
const TFE_TITLES: Partial<Record<keyof typeof errorCodes, string>> = {
  DOCUMENT_INVALID: "invalid_document",
  RUN_AUTO_APPLY_FORBIDDEN: "invalid_document",
  RUN_DESTROY_FORBIDDEN: "invalid_document",
  NOT_FOUND: "not found",
  UNAUTHENTICATED: "unauthorized",
};

/**
 * Details written for the tofu CLI user, who can act only by changing the command they ran: they
 * replace the detail of a refused run (whose error names no `source`). A refused workspace
 * setting names its attribute in `source.pointer` and keeps its own detail, which says what to send.
 */
const TFE_DETAILS: Partial<Record<keyof typeof errorCodes, string>> = {
  RUN_AUTO_APPLY_FORBIDDEN:
    "StackShip never applies without an explicit human approval, so -auto-approve is refused. Rerun `tofu apply` without -auto-approve: StackShip plans, shows you the plan, and applies it only after you answer yes.",
  RUN_DESTROY_FORBIDDEN:
    "StackShip does not run destroy plans (`tofu destroy`, `-destroy`). Remove the resources from the configuration and run `tofu apply` without -auto-approve; the deletions then appear in the plan you review.",
};

/** Error documents for the compatibility surface: string status, title and detail for the CLI. */
export const renderTfeError: ErrorRenderer = (error) => {
  const status = statusOf(error.code);
  const object: Record<string, unknown> = {
    status: String(status),
    title: TFE_TITLES[error.code] ?? errorCodes[error.code].title,
    detail: (error.source === undefined ? TFE_DETAILS[error.code] : undefined) ?? error.detail,
    code: error.code,
  };
  if (error.source?.pointer !== undefined || error.source?.parameter !== undefined) object.source = error.source;
  return { status, body: { errors: [object] } };
};
