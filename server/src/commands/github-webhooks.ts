import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "../domain/errors.ts";
import type { Services } from "./services.ts";
import type { GitHubDelivery } from "../store/index.ts";

/** The events and actions the pipeline acts on; any other verified delivery is recorded as ignored. */
export const HANDLED_EVENTS: Readonly<Record<string, readonly string[] | null>> = {
  push: null,
  pull_request: ["opened", "synchronize", "reopened", "closed"],
  installation: ["created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"],
  installation_repositories: ["added", "removed"],
  ping: null,
};

/** The audit actor of everything the pipeline does. */
export const GITHUB_ACTOR_ID = "github-app";

/** GitHub's delivery ids are GUIDs; anything of this shape is kept as the idempotency key. */
const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT_NAME = /^[a-z_]{1,100}$/;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

/**
 * Whether `signature` (`sha256=<hex>`) is the HMAC-SHA256 of exactly these bytes under the
 * webhook secret, compared in constant time. The bytes are used as received: never decoded and
 * re-encoded first (two bodies differing only in invalid UTF-8 would decode to the same text).
 */
export function signatureMatches(secret: string, body: Uint8Array, signature: string): boolean {
  const presented = SIGNATURE.exec(signature.trim().toLowerCase());
  if (!presented) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(presented[1], "hex"));
}

/** Strict UTF-8: a body that is not is refused rather than read with U+FFFD in place of its bytes. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Records a refused webhook request in the audit trail (nothing else is written). */
async function auditRefusal(
  services: Services,
  reason: string,
  data: { delivery_id?: string | null } & Record<string, unknown>,
): Promise<void> {
  await services.stores.audit.record({
    organizationId: null,
    actorId: null,
    action: "github.webhook.refused",
    targetType: "github-deliveries",
    targetId: String(data.delivery_id ?? "unknown").slice(0, 255),
    reason,
    data,
    createdAt: services.clock(),
  });
}

/** Audits a webhook body over the size limit (refused before it was read to the end). */
export async function auditOversizedWebhook(
  services: Services,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  limit: number,
): Promise<void> {
  await auditRefusal(services, "body_too_large", {
    delivery_id: header(headers, "x-github-delivery") ?? null,
    event: header(headers, "x-github-event") ?? null,
    limit_bytes: limit,
  });
}

/**
 * Receives one webhook delivery. The signature is checked over the raw bytes exactly as received
 * (constant time) before anything is decoded, parsed or written: missing or wrong is 401 and only
 * audited. A verified delivery is recorded once per `X-GitHub-Delivery`: a redelivery returns
 * the recorded one (`created: false`) and creates nothing. Events the pipeline acts on are queued
 * for the delivery job; `ping` and everything else end at once (processed, ignored).
 */
export async function receiveWebhook(
  services: Services,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: Uint8Array,
): Promise<{ delivery: GitHubDelivery; created: boolean }> {
  const settings = services.config.github;
  const deliveryId = header(headers, "x-github-delivery");
  const event = header(headers, "x-github-event");
  if (settings.state === "off") throw new DomainError("GITHUB_APP_NOT_CONFIGURED", settings.detail);
  const signature = header(headers, "x-hub-signature-256");
  if (!signature) {
    await auditRefusal(services, "signature_missing", { delivery_id: deliveryId ?? null, event: event ?? null });
    throw new DomainError(
      "GITHUB_WEBHOOK_SIGNATURE_INVALID",
      "The delivery has no X-Hub-Signature-256 header; configure the App's webhook secret.",
      {
        source: { header: "X-Hub-Signature-256" },
      },
    );
  }
  if (!signatureMatches(settings.webhookSecret, body, signature)) {
    await auditRefusal(services, "signature_invalid", { delivery_id: deliveryId ?? null, event: event ?? null });
    throw new DomainError(
      "GITHUB_WEBHOOK_SIGNATURE_INVALID",
      "The X-Hub-Signature-256 does not match the body and the webhook secret.",
      {
        source: { header: "X-Hub-Signature-256" },
      },
    );
  }
  if (!deliveryId || !event || !DELIVERY_ID.test(deliveryId) || !EVENT_NAME.test(event)) {
    await auditRefusal(services, "headers_invalid", {
      delivery_id: deliveryId?.slice(0, 100) ?? null,
      event: event?.slice(0, 100) ?? null,
    });
    throw new DomainError(
      "GITHUB_WEBHOOK_INVALID",
      "A delivery needs an X-GitHub-Event (an event name) and an X-GitHub-Delivery (its GUID) header.",
      {
        source: { header: deliveryId && DELIVERY_ID.test(deliveryId) ? "X-GitHub-Event" : "X-GitHub-Delivery" },
      },
    );
  }
  let payload: Record<string, unknown>;
  let raw: string;
  try {
    raw = UTF8.decode(body);
    payload = JSON.parse(raw) as Record<string, unknown>;
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new Error("not an object");
  } catch {
    await auditRefusal(services, "payload_not_json", { delivery_id: deliveryId, event });
    throw new DomainError(
      "GITHUB_WEBHOOK_INVALID",
      "The delivery's body is not a UTF-8 JSON object; set the App's webhook content type to application/json.",
      {
        source: { pointer: "" },
      },
    );
  }
  const action = typeof payload.action === "string" ? payload.action : null;
  const installation = payload.installation as { id?: unknown } | undefined;
  const repository = payload.repository as { full_name?: unknown } | undefined;
  const handled =
    Object.hasOwn(HANDLED_EVENTS, event) &&
    (HANDLED_EVENTS[event] === null || (action !== null && HANDLED_EVENTS[event].includes(action)));
  const queued = handled && event !== "ping";
  const now = services.clock();
  const recorded = await services.stores.github.recordDelivery({
    id: deliveryId,
    event,
    action,
    installationId: typeof installation?.id === "number" ? installation.id : null,
    repository: typeof repository?.full_name === "string" ? repository.full_name : null,
    payload: raw,
    status: queued ? "queued" : event === "ping" ? "processed" : "ignored",
    outcome: queued ? null : event === "ping" ? "pong" : "event_not_handled",
    detail: queued
      ? null
      : event === "ping"
        ? "GitHub's ping arrived: the webhook reaches StackShip and its signature checks."
        : `StackShip does not act on ${event}${action ? `.${action}` : ""}.`,
    now,
  });
  if (!recorded.created) {
    await services.stores.audit.record({
      organizationId: null,
      actorId: GITHUB_ACTOR_ID,
      action: "github.delivery.replayed",
      targetType: "github-deliveries",
      targetId: deliveryId,
      data: { event, status: recorded.delivery.status },
      createdAt: now,
    });
    return recorded;
  }
  await services.stores.audit.record({
    organizationId: null,
    actorId: GITHUB_ACTOR_ID,
    action: "github.delivery.received",
    targetType: "github-deliveries",
    targetId: deliveryId,
    data: { event, action, status: recorded.delivery.status },
    createdAt: now,
  });
  if (queued) {
    await services.stores.github.dispatchDelivery(deliveryId, now);
    services.githubDeliveryQueued?.();
  }
  return recorded;
}
