// The dashboard session as the pages see it: who is signed in, the CSRF token every change sends,
// the organizations the person belongs to and the one currently shown.
import type { SessionDocument } from "@stackship/client";

/** The detail of `ss-signed-in`: the session document sign-in answered with. */
export type SignedInDetail = SessionDocument;

export interface SessionOrganization {
  id: string;
  name: string;
}

export interface Session {
  id: string;
  csrfToken: string;
  expiresAt: string;
  stepUpFreshUntil: string | null;
  user: SessionDocument["data"]["attributes"]["user"];
  organizations: SessionOrganization[];
  /** The organization the runs page lists (null when the person belongs to none). */
  organization: string | null;
  /** Whether the person administers that organization (the navigation shows its admin pages). */
  organizationAdmin: boolean;
}

const ORGANIZATION_KEY = "stackship.organization";

/** The organization to show: the remembered one when still a member, else the first. */
export function chooseOrganization(organizations: SessionOrganization[], requested?: string | null): string | null {
  const remembered = requested ?? safeStorage()?.getItem(ORGANIZATION_KEY) ?? null;
  if (remembered && organizations.some((o) => o.name === remembered)) return remembered;
  return organizations[0]?.name ?? null;
}

export function rememberOrganization(name: string): void {
  safeStorage()?.setItem(ORGANIZATION_KEY, name);
}

function safeStorage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}
