// Types of plan-diff.mjs (plain JavaScript so the plan sandbox can run it without a TypeScript toolchain).

export declare const PLAN_DIFF_FORMAT: "stackship.plan-diff/v1";
export declare const MAX_RESOURCES: 5000;
export declare const MAX_BYTES: 4194304;
export declare const MARKER_KEY: "$stackship";

/** Input that is not plan JSON; the message never quotes the input. */
export declare class PlanDiffInputError extends Error {}

export type PlanDiffAction = "create" | "update" | "delete" | "replace" | "forget" | "forget_replace" | "unknown";
export type WithheldReason =
  "unresolvable_masks" | "unrecognized_actions" | "unsupported_format_version" | "size_limit";

/** A redacted value: JSON, where objects may be markers (`{"$stackship": "sensitive" | "unknown" | "imprecise_number", …}`). */
export type PlanDiffValue = null | boolean | number | string | PlanDiffValue[] | { [key: string]: PlanDiffValue };

export interface PlanDiffResource {
  address: string;
  provider: string | null;
  mode: string | null;
  type: string | null;
  name: string | null;
  module_address?: string;
  deposed?: string;
  previous_address?: string;
  actions: string[];
  action: PlanDiffAction;
  action_reason?: string;
  importing?: true;
  before?: PlanDiffValue;
  after?: PlanDiffValue;
  replace_paths?: Array<Array<string | number>>;
  detail_withheld?: true;
  withheld_reason?: WithheldReason;
}

export interface PlanDiffTruncation {
  max_resources: number;
  max_bytes: number;
  /** Changed resources in the plan (no-op and read entries are not counted). */
  changed_resources: number;
  /** Cut from the input before redaction (bound 1). */
  cut: number;
  /** Detail withheld to fit the byte bound (bound 2). */
  withheld: number;
  /** Dropped entirely from the end because withholding every detail was not enough. */
  dropped: number;
}

export interface PlanDiff {
  format: "stackship.plan-diff/v1";
  run_id: string | null;
  opentofu_version: string | null;
  plan_format_version: string;
  plan_timestamp: string | null;
  plan_errored: boolean;
  truncated: boolean;
  truncation: PlanDiffTruncation;
  resources: PlanDiffResource[];
}

export interface BuildOptions {
  runId?: string | null;
  /** Values that are secret whatever the masks say (e.g. the run's sensitive variables), at any length: values whose text contains one are redacted. */
  knownSecrets?: readonly string[];
  /** false: do not also redact by value what the plan marks sensitive (tests only; default true). */
  planSensitiveValues?: boolean;
  /** Redact the plan's own value objects in place instead of private copies (the command does: it parsed the plan itself). */
  consume?: boolean;
  /** Tests only. */
  maxResources?: number;
  /** Tests only. */
  maxBytes?: number;
}

export interface BuildResult {
  artifact: PlanDiff;
  /** The exact serialization: compact JSON, no trailing newline. */
  json: string;
  /** UTF-8 length of `json`; never more than the byte bound. */
  bytes: number;
}

export declare function classifyActions(actions: readonly string[]): PlanDiffAction;
/** Throws PlanDiffInputError for input that is not plan JSON. */
export declare function buildPlanDiff(plan: unknown, options?: BuildOptions): BuildResult;
