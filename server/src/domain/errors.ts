/** The business-level category of an error; `http/` maps each kind to one status. */
export type ErrorKind =
  | "invalid"
  | "not_found"
  | "conflict"
  | "forbidden"
  | "unauthenticated"
  | "precondition_failed"
  | "unavailable"
  | "too_large"
  | "throttled";

/**
 * The catalogue of stable error codes: each code has one kind and one fixed title.
 * It lists exactly the codes and titles of spec/v1/error-codes.yaml (errors.test.ts checks).
 */
export const ERROR_CODES = {
  REQUEST_INVALID: { kind: "invalid", title: "Invalid request parameter" },
  DOCUMENT_INVALID: { kind: "invalid", title: "Invalid request document" },
  REQUEST_ENCODING_INVALID: { kind: "invalid", title: "Request body is not valid UTF-8" },
  UNAUTHENTICATED: { kind: "unauthenticated", title: "Authentication required" },
  FORBIDDEN: { kind: "forbidden", title: "Permission denied" },
  NOT_FOUND: { kind: "not_found", title: "Not found" },
  METHOD_NOT_ALLOWED: { kind: "invalid", title: "Method not allowed" },
  ORGANIZATION_NAME_TAKEN: { kind: "conflict", title: "Organization name already taken" },
  PROJECT_NAME_TAKEN: { kind: "conflict", title: "Project name already taken" },
  WORKSPACE_NAME_TAKEN: { kind: "conflict", title: "Workspace name already taken" },
  VARIABLE_KEY_TAKEN: { kind: "conflict", title: "Variable key already taken" },
  VARIABLE_SENSITIVITY_IRREVERSIBLE: { kind: "invalid", title: "A sensitive variable stays sensitive" },
  RUN_AUTO_APPLY_FORBIDDEN: { kind: "invalid", title: "Auto-apply is not supported" },
  RUN_DESTROY_FORBIDDEN: { kind: "invalid", title: "Destroy runs are not supported" },
  RUN_LIST_CURSOR_INVALID: { kind: "invalid", title: "Invalid run list cursor" },
  AUDIT_CURSOR_INVALID: { kind: "invalid", title: "Invalid audit history cursor" },
  WORKSPACE_LIST_CURSOR_INVALID: { kind: "invalid", title: "Invalid workspace list cursor" },
  CONFIGURATION_VERSION_NOT_UPLOADED: { kind: "conflict", title: "Configuration version not uploaded" },
  CONFIGURATION_VERSION_ALREADY_UPLOADED: { kind: "conflict", title: "Configuration version already uploaded" },
  CONFIGURATION_VERSION_WORKSPACE_MISMATCH: {
    kind: "invalid",
    title: "Configuration version belongs to another workspace",
  },
  CONFIGURATION_UPLOAD_INVALID: { kind: "invalid", title: "Invalid configuration upload" },
  CONFIGURATION_UPLOAD_TOO_LARGE: { kind: "too_large", title: "Configuration upload too large" },
  CONFIGURATION_UPLOAD_BUSY: { kind: "unavailable", title: "Too many configuration uploads are being checked" },
  OPENTOFU_VERSION_UNAVAILABLE: { kind: "invalid", title: "OpenTofu version unavailable" },
  EXECUTION_REGION_UNAVAILABLE: { kind: "invalid", title: "Execution region unavailable" },
  RUN_TRANSITION_INVALID: { kind: "conflict", title: "Run cannot do that now" },
  RUN_PLAN_DIGEST_MISMATCH: { kind: "conflict", title: "Plan digest does not match the reviewed plan" },
  RUN_POLICY_RESULT_CHANGED: { kind: "conflict", title: "Policy result changed since review" },
  RUN_PREDECESSOR_STATE_CHANGED: { kind: "conflict", title: "Workspace state changed since the plan" },
  RUN_DEPENDENCY_BUNDLE_CHANGED: { kind: "conflict", title: "Dependency bundle changed since the plan" },
  RUN_ALREADY_DECIDED: { kind: "conflict", title: "Run already has a decision" },
  RECOVERY_NOTHING_TO_COMMIT: { kind: "conflict", title: "No pending state version to commit" },
  CONSTRAINT_VIOLATION: { kind: "conflict", title: "Conflicting change" },
  WORKSPACE_LOCKED: { kind: "conflict", title: "Workspace is locked" },
  WORKSPACE_NOT_LOCKED: { kind: "conflict", title: "Workspace is not locked" },
  RUN_TOKEN_LOCK_REQUIRED: { kind: "conflict", title: "An apply token needs the run to hold the lock" },
  STATE_VERSION_RUN_REQUIRED: { kind: "conflict", title: "State is published only by an apply" },
  STATE_VERSION_PHASE_FORBIDDEN: { kind: "conflict", title: "Only the apply phase may write state" },
  STATE_VERSION_RUN_MISMATCH: { kind: "conflict", title: "State version names another run" },
  STATE_VERSION_LOCK_REQUIRED: { kind: "conflict", title: "Run does not hold the workspace lock" },
  STATE_VERSION_FENCE_STALE: { kind: "conflict", title: "Stale workspace lock fence" },
  STATE_VERSION_SERIAL_NOT_INCREASING: { kind: "conflict", title: "State serial must increase" },
  STATE_VERSION_LINEAGE_MISMATCH: { kind: "conflict", title: "State lineage differs from the current state" },
  STATE_VERSION_UPLOAD_INVALID: { kind: "invalid", title: "Invalid state upload" },
  STATE_VERSION_ALREADY_UPLOADED: { kind: "conflict", title: "State version already uploaded" },
  STATE_VERSION_NOT_UPLOADED: { kind: "conflict", title: "State version not uploaded" },
  STATE_VERSION_NOT_PENDING: { kind: "conflict", title: "State version is not pending" },
  STATE_PUBLICATION_MISMATCH: { kind: "conflict", title: "State publication does not match the upload" },
  POLICY_SET_NAME_TAKEN: { kind: "conflict", title: "Policy set name already taken" },
  POLICY_SET_ATTACHMENT_INVALID: { kind: "invalid", title: "Invalid policy set attachment" },
  POLICY_SOURCE_INVALID: { kind: "invalid", title: "Invalid policy module" },
  POLICY_OVERRIDE_PERMISSION_REQUIRED: {
    kind: "forbidden",
    title: "Overriding a policy failure needs policy:override_soft",
  },
  POLICY_OVERRIDE_HARD_FAILED: {
    kind: "conflict",
    title: "Hard-failed or errored policy results cannot be overridden",
  },
  POLICY_OVERRIDE_NOT_SOFT_FAILED: { kind: "conflict", title: "Run is not waiting on a soft policy failure" },
  POLICY_OVERRIDE_DIGEST_MISMATCH: { kind: "conflict", title: "Policy result digest is not the run's current result" },
  POLICY_OVERRIDE_REQUIRED: { kind: "conflict", title: "A soft policy failure needs an override before approval" },
  POLICY_OVERRIDE_EXPIRED: { kind: "conflict", title: "The policy override expired" },
  RUN_PLAN_CHANGES_NOT_READY: { kind: "conflict", title: "Plan changes are not available yet" },
  RUN_PLAN_CHANGES_UNAVAILABLE: { kind: "not_found", title: "Plan changes were not produced" },
  PLAN_JSON_UNAVAILABLE: { kind: "not_found", title: "Plan JSON is not available" },
  CREDENTIALS_INVALID: { kind: "unauthenticated", title: "Email or password is wrong" },
  SESSION_CSRF_INVALID: { kind: "forbidden", title: "Missing or wrong CSRF token" },
  SESSION_REQUIRED: { kind: "forbidden", title: "This needs a signed-in session" },
  STEP_UP_REQUIRED: { kind: "forbidden", title: "Confirm your password first" },
  STEP_UP_PASSWORD_INVALID: { kind: "forbidden", title: "Password is wrong" },
  AUTH_THROTTLED: { kind: "throttled", title: "Too many failed attempts" },
  LIVE_SOCKET_LIMIT: { kind: "throttled", title: "Too many live sockets for this session" },
  USER_EMAIL_TAKEN: { kind: "conflict", title: "Email already taken" },
  SETUP_TOKEN_INVALID: { kind: "invalid", title: "Unknown, expired or used setup link" },
  MEMBERSHIP_EXISTS: { kind: "conflict", title: "Membership already exists" },
  MEMBERSHIP_USER_UNKNOWN: { kind: "invalid", title: "No user has this email" },
  MEMBERSHIP_SCOPE_INVALID: { kind: "invalid", title: "Membership scope is not in this organization" },
  TOKEN_EXPIRY_INVALID: { kind: "invalid", title: "A token's expiry must be in the future" },
  PASSWORD_CURRENT_INVALID: { kind: "forbidden", title: "The current password is wrong" },
  PASSWORD_UNCHANGED: { kind: "invalid", title: "The new password is the current one" },
  DOWNLOAD_QUERY_FORBIDDEN: { kind: "invalid", title: "Downloads take no query string" },
  DOWNLOAD_REASON_REQUIRED: { kind: "invalid", title: "A reason is required" },
  RAW_PLAN_UNAVAILABLE: { kind: "not_found", title: "Raw plan is not available" },
  EMERGENCY_STATE_UNAVAILABLE: { kind: "not_found", title: "No state was uploaded by this run" },
  GITHUB_WEBHOOK_SIGNATURE_INVALID: { kind: "unauthenticated", title: "Webhook signature missing or wrong" },
  GITHUB_WEBHOOK_TOO_LARGE: { kind: "too_large", title: "Webhook body too large" },
  GITHUB_WEBHOOK_INVALID: { kind: "invalid", title: "Invalid webhook delivery" },
  GITHUB_APP_NOT_CONFIGURED: { kind: "unavailable", title: "The GitHub App is not configured" },
  SOURCE_INSTALLATION_IN_USE: { kind: "conflict", title: "The installation is connected to another organization" },
  SOURCE_INSTALLATION_NOT_BOUND: { kind: "invalid", title: "The installation is not bound to this organization" },
  SOURCE_REPOSITORY_NOT_ACCESSIBLE: { kind: "invalid", title: "The installation cannot access the repository" },
  GITHUB_INSTALLATION_SETUP_REQUIRED: { kind: "forbidden", title: "Install the GitHub App through its setup flow" },
  GITHUB_INSTALLATION_STATE_INVALID: { kind: "invalid", title: "Unknown, expired or used setup state" },
  GITHUB_INSTALLATION_NOT_FOUND: { kind: "invalid", title: "GitHub does not know this installation" },
  GITHUB_INSTALLATION_PREDATES_STATE: { kind: "invalid", title: "The installation is older than the setup state" },
  GITHUB_INSTALLATION_HAS_CONNECTIONS: { kind: "conflict", title: "Workspaces still connect through the installation" },
  GITHUB_API_UNAVAILABLE: { kind: "unavailable", title: "GitHub's API cannot be reached" },
  WORKLOAD_IDENTITY_UNAVAILABLE: { kind: "not_found", title: "Workload identity is not configured on this deployment" },
  FEDERATION_PROFILE_NAME_TAKEN: { kind: "conflict", title: "Federation profile name already taken" },
  FEDERATION_PROFILE_INVALID: { kind: "invalid", title: "Invalid federation profile" },
  INTERNAL: { kind: "unavailable", title: "Internal error" },
} as const satisfies Record<string, { readonly kind: ErrorKind; readonly title: string }>;

/** A stable, machine-readable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Where in the request an error originates (JSON:API `source`). */
export interface ErrorSource {
  pointer?: string;
  parameter?: string;
  header?: string;
}

/** Optional parts of a DomainError. */
export interface DomainErrorOptions {
  source?: ErrorSource;
  meta?: Record<string, unknown>;
  cause?: unknown;
  /** For a `throttled` error: how long to wait, in whole seconds (the `Retry-After` header). */
  retryAfterSeconds?: number;
}

/** An error the business layer raises on purpose; never carries an HTTP status. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly detail: string;
  readonly source?: ErrorSource;
  readonly meta?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, detail: string, options: DomainErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DomainError";
    this.code = code;
    this.kind = ERROR_CODES[code].kind;
    this.detail = detail;
    if (options.source !== undefined) this.source = options.source;
    if (options.meta !== undefined) this.meta = options.meta;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The fixed title of this error's code. */
  get title(): string {
    return ERROR_CODES[this.code].title;
  }
}

/** Whether `value` is a DomainError, optionally with the given code. */
export function isDomainError(value: unknown, code?: ErrorCode): value is DomainError {
  return value instanceof DomainError && (code === undefined || value.code === code);
}
