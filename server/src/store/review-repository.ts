import { newId } from "../domain/ids.ts";
import type { RunReview } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbTimestamp } from "./rows.ts";
import { rowMapper } from "./columns.ts";

/** run_reviews */
interface ReviewRow {
  id: string;
  run_id: string;
  decision: RunReview["decision"];
  actor_id: string | null;
  reason: string | null;
  plan_digest: string | null;
  plan_json_digest: string | null;
  plan_diff_digest: string | null;
  policy_result_digest: string | null;
  predecessor_state_digest: string | null;
  dependency_bundle_digest: string | null;
  decided_at: DbTimestamp;
}

const toReview = rowMapper<ReviewRow, RunReview>()(
  "id run_id decision actor_id reason plan_digest plan_json_digest plan_diff_digest policy_result_digest predecessor_state_digest dependency_bundle_digest decided_at:iso",
);

/** Review decisions: at most one per run (a unique index makes racing decisions fail). */
export class ReviewRepository extends Repository {
  /** Records the run's decision; a second decision throws CONSTRAINT_VIOLATION. */
  async record(input: Omit<RunReview, "id" | "decidedAt"> & { decidedAt: Date | string }): Promise<RunReview> {
    const row = toReview.write({ id: newId("review"), ...input });
    return translating(this.dialect, async () => {
      await this.db<ReviewRow>("run_reviews").insert(row);
      return toReview(row);
    });
  }

  /** The run's decision, if any. */
  async getByRun(runId: string): Promise<RunReview | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ReviewRow>("run_reviews").where({ run_id: runId }).first();
      return row && toReview(row);
    });
  }
}
