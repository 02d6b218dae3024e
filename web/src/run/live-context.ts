import { createContext } from "@lit/context";
import type { RunLiveFeed } from "./live-feed.ts";

/** What the run page provides to its consoles: the live feed (null when none was opened) and whether it is live now. */
export interface LiveHandle {
  feed: RunLiveFeed;
  live: boolean;
}

export const liveContext = createContext<LiveHandle | null>(Symbol("ss-run-live"));
