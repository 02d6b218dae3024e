// /workspaces/{id}/cloud-access — the cloud credentials runs of this workspace receive: whether
// this deployment is an OIDC issuer at all (discovery answers 404 WORKLOAD_IDENTITY_UNAVAILABLE
// when STACKSHIP_PUBLIC_URL is unset), whether plans need a credential (a switch for workspace:write
// holders), and the federation profiles with their verification. workspace:write holders create,
// edit and delete profiles; organization admins verify them. Any change clears a verification, and
// only verified profiles serve speculative plans. Everything through the generated SDK.
import {
  createFederationProfile,
  deleteFederationProfile,
  getOpenIdConfiguration,
  listFederationProfiles,
  updateFederationProfile,
  updateWorkspace,
  verifyFederationProfile,
  type Client,
  type FederationPhase,
  type FederationProfile,
  type FederationProvider,
  type FederationTarget,
  type OpenIdConfiguration,
} from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { live } from "lit/directives/live.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { ContractError } from "../app/closed-sets.ts";
import {
  failureText,
  pointerOf,
  refusalOf,
  timeCell,
  workspaceStyles,
  type LoadedWorkspace,
} from "./workspace-common.ts";
import { workspaceFrame } from "./workspace-frame.ts";
import { WorkspaceLoader } from "./workspace-loader.ts";
import { takeSubmit } from "../ui/form-data.ts";

// Closed sets, exhaustive over the generated unions (a spec change fails the type check).
export const PROVIDER_LABELS: Record<FederationProvider, string> = {
  aws: "AWS",
  gcp: "Google Cloud",
  azure: "Azure",
  generic: "Generic OIDC",
};
export const PHASE_LABELS: Record<FederationPhase, string> = {
  plan: "Plan",
  apply: "Apply",
  speculative_plan: "Speculative plan",
};
type TargetKey = keyof FederationTarget;
const TARGET_LABELS: Record<TargetKey, string> = {
  role_arn: "Role ARN",
  workload_identity_provider: "Workload identity provider",
  service_account: "Service account",
  client_id: "Client id",
  tenant_id: "Tenant id",
};
/** The target members each provider takes (the server refuses the others). */
export const PROVIDER_TARGETS: Record<FederationProvider, TargetKey[]> = {
  aws: ["role_arn"],
  gcp: ["workload_identity_provider", "service_account"],
  azure: ["client_id", "tenant_id"],
  generic: [],
};
const PROVIDERS = Object.keys(PROVIDER_LABELS) as FederationProvider[];
const PHASES = Object.keys(PHASE_LABELS) as FederationPhase[];

export function checkProfile(profile: FederationProfile): FederationProfile {
  const a = profile.attributes;
  if (!(a.provider in PROVIDER_LABELS))
    throw new ContractError(
      `Profile ${profile.id} names the provider “${String(a.provider)}”, which StackShip does not define.`,
    );
  for (const phase of a.phases)
    if (!(phase in PHASE_LABELS))
      throw new ContractError(
        `Profile ${profile.id} names the phase “${String(phase)}”, which StackShip does not define.`,
      );
  return profile;
}

/** The issuer, or why there is none (off: the deployment has no STACKSHIP_PUBLIC_URL). */
type Issuer =
  { state: "on"; configuration: OpenIdConfiguration } | { state: "off" } | { state: "unknown"; error: unknown };

async function readIssuer(api: Client, signal: AbortSignal): Promise<Issuer> {
  try {
    return { state: "on", configuration: await dataOf(getOpenIdConfiguration({ client: api, signal })) };
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    if (error instanceof RequestFailed && error.status === 404 && error.code === "WORKLOAD_IDENTITY_UNAVAILABLE")
      return { state: "off" };
    return { state: "unknown", error };
  }
}

type Editing = { mode: "create" } | { mode: "edit"; profile: FederationProfile } | null;

@customElement("ss-workspace-cloud-access-page")
export class SsWorkspaceCloudAccessPage extends LitElement {
  static override styles = [
    workspaceStyles,
    css`
      article.profile {
        border: 1px solid var(--ss-border);
        border-radius: var(--ss-radius);
        padding: var(--ss-space-3) var(--ss-space-4);
        margin-bottom: var(--ss-space-3);
      }
      article.profile h3 {
        margin-top: 0;
      }
      .verified {
        color: var(--ss-success);
      }
      .unverified {
        color: var(--ss-attention);
      }
    `,
  ];

  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  @state() private accessor editing: Editing = null;
  @state() private accessor provider: FederationProvider = "aws";
  @state() private accessor fieldErrors: Record<string, string> = {};
  @state() private accessor formError: TemplateResult | null = null;
  @state() private accessor busy = false;
  @state() private accessor confirmingDelete: string | null = null;
  @state() private accessor rowError: { id: string; message: TemplateResult } | null = null;
  @state() private accessor announcement = "";
  /** The switch's value while its change is being sent (then what the server holds). */
  @state() private accessor planPending: boolean | null = null;

  private readonly page = new WorkspaceLoader(this, async (api, id, signal) => {
    const [profiles, issuer] = await Promise.all([
      dataOf(listFederationProfiles({ client: api, path: { workspace_id: id }, signal })).then((d) =>
        d.data.map(checkProfile),
      ),
      readIssuer(api, signal),
    ]);
    return { profiles, issuer };
  });

  override render(): TemplateResult {
    return workspaceFrame(this.page, {
      tab: "cloud-access",
      loading: "Loading cloud access…",
      unavailable: "Cloud access is unavailable",
      heading: (workspace) => `Cloud access for ${workspace.attributes.name}`,
      body: (loaded) => html`${this.renderIssuer(loaded.issuer)} ${this.renderPlanRequirement(loaded)}
        <section aria-labelledby="profiles-heading">
          <h2 id="profiles-heading">Federation profiles</h2>
          <p id="verification-note">
            A run receives a short-lived token for each profile that serves its phase. <strong>Any change to a profile clears its verification</strong>, and only verified profiles serve speculative
            plans (same-repository pull requests); an organization admin verifies them. Fork pull requests never receive a credential.
          </p>
          ${loaded.profiles.length === 0 ? html`<p id="profiles-empty">This workspace has no federation profile: its runs receive no cloud credential.</p>` : loaded.profiles.map((p) => this.renderProfile(p, loaded))}
          ${loaded.permissions.write ? this.renderEditor(loaded) : nothing}
        </section>`,
      announcement: { id: "cloud-access-announcement", text: this.announcement },
    });
  }

  private renderIssuer(issuer: Issuer): TemplateResult {
    if (issuer.state === "on") {
      return html`<p class="notice info" id="workload-identity-on">Workload identity is on: StackShip issues tokens as <code>${issuer.configuration.issuer}</code>.</p>`;
    }
    if (issuer.state === "off") {
      return html`<div class="notice attention" id="workload-identity-off">
        <p><strong>Workload identity is off on this deployment.</strong> No run receives a cloud credential, whatever the profiles below say.</p>
        <p>
          To turn it on, the deployment's operator sets <code>STACKSHIP_PUBLIC_URL</code> to the URL clouds reach StackShip at (it becomes the token issuer, exactly) and restarts it; the cloud then trusts that
          issuer.
        </p>
      </div>`;
    }
    return html`<p class="notice danger" role="alert" id="workload-identity-unknown">Whether workload identity is on could not be read: ${failureText(issuer.error)}.</p>`;
  }

  private renderPlanRequirement(loaded: LoadedWorkspace): TemplateResult {
    const required = loaded.workspace.attributes.plan_requires_credential;
    const sentence = required
      ? "Plans need a cloud credential: a run whose plan may not have one (a fork pull request, a speculative run without a verified speculative-plan profile, a plan without a plan profile) ends Plan credentials required before anything runs."
      : "Plans do not need a cloud credential: a plan without one runs with only the StackShip state backend and the mirrored providers.";
    return html`<section aria-labelledby="plan-requirement-heading">
      <h2 id="plan-requirement-heading">Plans</h2>
      ${
        loaded.permissions.write
          ? html`<label class="actions">
            <input type="checkbox" role="switch" id="plan-requires-credential" .checked=${live(this.planPending ?? required)} ?disabled=${this.busy} @change=${(e: Event) => this.setPlanRequirement(loaded, (e.target as HTMLInputElement).checked)} />
            Plans need a cloud credential
          </label>`
          : nothing
      }
      <p id="plan-requirement">${sentence}</p>
      ${this.rowError?.id === "plan" ? html`<p class="notice danger" role="alert">${this.rowError.message}</p>` : nothing}
    </section>`;
  }

  private renderProfile(profile: FederationProfile, loaded: LoadedWorkspace): TemplateResult {
    if (this.editing?.mode === "edit" && this.editing.profile.id === profile.id)
      return this.renderForm(loaded, profile);
    const a = profile.attributes;
    const targets = PROVIDER_TARGETS[a.provider].filter((key) => a.target[key]);
    const headingId = `profile-${profile.id}`;
    return html`<article class="profile" data-profile-id=${profile.id} aria-labelledby=${headingId}>
      <h3 id=${headingId}>${a.name}</h3>
      <dl class="facts">
        <dt>Provider</dt><dd>${PROVIDER_LABELS[a.provider]}</dd>
        <dt>Audience</dt><dd class="mono">${a.audience}</dd>
        ${targets.map((key) => html`<dt>${TARGET_LABELS[key]}</dt><dd class="mono">${a.target[key]}</dd>`)}
        <dt>Phases</dt><dd>${a.phases.map((p) => PHASE_LABELS[p]).join(", ")}</dd>
        <dt>Verification</dt>
        <dd class="verification">
          ${
            a.verified_at
              ? html`<span class="verified">Verified</span> by <span class="mono">${a.verified_by}</span> ${timeCell(a.verified_at)}`
              : html`<span class="unverified">Not verified</span>${a.phases.includes("speculative_plan") ? html` — it serves no speculative plan until an organization admin verifies it` : nothing}`
          }
        </dd>
        <dt>Changed</dt><dd>${timeCell(a.updated_at)}</dd>
      </dl>
      <div class="actions">
        ${loaded.permissions.verify_federation_profiles && !a.verified_at ? html`<button type="button" class="primary" ?disabled=${this.busy} @click=${() => this.verify(profile)}>Verify ${a.name}</button>` : nothing}
        ${
          loaded.permissions.write
            ? html`<button type="button" ?disabled=${this.busy} @click=${() => this.startEditing({ mode: "edit", profile })}>Edit ${a.name}</button>
              ${
                this.confirmingDelete === profile.id
                  ? html`<span role="group" aria-label="Confirm deletion">
                    Delete ${a.name}? Runs stop receiving its token.
                    <button type="button" class="danger" ?disabled=${this.busy} @click=${() => this.deleteProfile(profile)}>Delete</button>
                    <button type="button" @click=${() => (this.confirmingDelete = null)}>Keep it</button>
                  </span>`
                  : html`<button type="button" @click=${() => (this.confirmingDelete = profile.id)}>Delete ${a.name}…</button>`
              }`
            : nothing
        }
      </div>
      ${this.rowError?.id === profile.id ? html`<p class="notice danger" role="alert">${this.rowError.message}</p>` : nothing}
    </article>`;
  }

  private renderEditor(loaded: LoadedWorkspace): TemplateResult {
    if (this.editing?.mode === "create") return this.renderForm(loaded, null);
    return html`<p><button type="button" id="new-profile" @click=${() => this.startEditing({ mode: "create" })}>New federation profile</button></p>`;
  }

  private startEditing(editing: Editing): void {
    this.editing = editing;
    this.provider = editing?.mode === "edit" ? editing.profile.attributes.provider : "aws";
    this.fieldErrors = {};
    this.formError = null;
  }

  private renderForm(loaded: LoadedWorkspace, profile: FederationProfile | null): TemplateResult {
    const a = profile?.attributes;
    const error = (key: string) =>
      this.fieldErrors[key]
        ? html`<p class="field-error" id="error-${key.replace("/", "-")}">${this.fieldErrors[key]}</p>`
        : nothing;
    const describedBy = (key: string) => (this.fieldErrors[key] ? `error-${key.replace("/", "-")}` : nothing);
    return html`<form class="settings" id="profile-form" novalidate aria-labelledby="profile-form-heading" @submit=${(e: SubmitEvent) => this.save(e, loaded, profile)}>
      <h3 id="profile-form-heading">${profile ? `Edit ${a!.name}` : "New federation profile"}</h3>
      ${profile?.attributes.verified_at ? html`<p class="notice attention" id="edit-clears-verification">Saving a change clears this profile's verification.</p>` : nothing}
      <label>Name <input name="name" required value=${a?.name ?? ""} aria-invalid=${this.fieldErrors.name ? "true" : "false"} aria-describedby=${describedBy("name")} />${error("name")}</label>
      <label
        >Provider
        <select name="provider" @change=${(e: Event) => (this.provider = (e.target as HTMLSelectElement).value as FederationProvider)}>
          ${PROVIDERS.map((p) => html`<option value=${p} ?selected=${p === this.provider}>${PROVIDER_LABELS[p]}</option>`)}
        </select>
        ${error("provider")}
      </label>
      <div class="field">
        <label for="field-audience">Audience</label> <span class="hint" id="hint-audience">Empty for the provider's default (a generic profile must name one).</span>
        <input id="field-audience" name="audience" value=${a?.audience ?? ""} aria-invalid=${this.fieldErrors.audience ? "true" : "false"} aria-describedby=${["hint-audience", this.fieldErrors.audience ? "error-audience" : ""].filter(Boolean).join(" ")} />${error("audience")}
      </div>
      ${PROVIDER_TARGETS[this.provider].map(
        (key) =>
          html`<label
            >${TARGET_LABELS[key]}
            <input name="target.${key}" value=${a?.target[key] ?? ""} aria-invalid=${this.fieldErrors[`target/${key}`] ? "true" : "false"} aria-describedby=${describedBy(`target/${key}`)} />${error(`target/${key}`)}
          </label>`,
      )}
      ${error("target")}
      <fieldset aria-describedby=${describedBy("phases")}>
        <legend>Phases</legend>
        ${PHASES.map((phase) => html`<label class="check"><input type="checkbox" name="phases" value=${phase} ?checked=${a ? a.phases.includes(phase) : phase !== "speculative_plan"} /> ${PHASE_LABELS[phase]}</label>`)}
        ${error("phases")}
      </fieldset>
      ${this.formError ? html`<p class="notice danger" role="alert" id="profile-form-error">${this.formError}</p>` : nothing}
      <div class="actions">
        <button type="submit" class="primary" ?disabled=${this.busy}>${profile ? "Save the profile" : "Create the profile"}</button>
        <button type="button" @click=${() => this.startEditing(null)}>Cancel</button>
      </div>
    </form>`;
  }

  private async save(event: SubmitEvent, loaded: LoadedWorkspace, profile: FederationProfile | null): Promise<void> {
    const { data, trimmed: text } = takeSubmit(event);
    const provider = text("provider") as FederationProvider;
    const target: FederationTarget = {};
    for (const key of PROVIDER_TARGETS[provider] ?? []) if (text(`target.${key}`)) target[key] = text(`target.${key}`);
    const attributes = {
      name: text("name"),
      provider,
      audience: text("audience") || undefined,
      target,
      phases: data.getAll("phases").map(String) as FederationPhase[],
    };
    this.fieldErrors = {};
    this.formError = null;
    this.busy = true;
    try {
      const result = profile
        ? await updateFederationProfile({
            client: this.page.api,
            path: { workspace_id: loaded.workspace.id, profile_id: profile.id },
            body: { data: { type: "federation-profiles", id: profile.id, attributes } },
          })
        : await createFederationProfile({
            client: this.page.api,
            path: { workspace_id: loaded.workspace.id },
            body: { data: { type: "federation-profiles", attributes } },
          });
      if (result.response?.ok) {
        this.editing = null;
        this.announcement = profile ? `Saved ${attributes.name}.` : `Created ${attributes.name}.`;
        this.page.reload();
        return;
      }
      const failure = refusalOf(result.error, result.response?.status ?? 0);
      const key = pointerOf(result.error)?.replace(/^\/data\/attributes\//, "");
      if (key && /^(name|provider|audience|phases|target(\/[a-z_]+)?)$/.test(key))
        this.fieldErrors = { [key]: failure.message };
      else this.formError = failureText(failure);
    } catch {
      this.formError = html`The server could not be reached; nothing was saved.`;
    } finally {
      this.busy = false;
    }
  }

  private async act(
    id: string,
    call: () => Promise<{ response?: Response; error?: unknown }>,
    done: string,
  ): Promise<void> {
    this.busy = true;
    this.rowError = null;
    try {
      const result = await call();
      if (result.response?.ok) {
        this.announcement = done;
        this.confirmingDelete = null;
        this.page.reload();
        return;
      }
      this.rowError = { id, message: failureText(refusalOf(result.error, result.response?.status ?? 0)) };
    } catch {
      this.rowError = { id, message: html`The server could not be reached; nothing changed.` };
    } finally {
      this.busy = false;
    }
  }

  private verify(profile: FederationProfile): Promise<void> {
    return this.act(
      profile.id,
      () => verifyFederationProfile({ client: this.page.api, path: { profile_id: profile.id } }),
      `Verified ${profile.attributes.name}.`,
    );
  }

  private deleteProfile(profile: FederationProfile): Promise<void> {
    const workspaceId = profile.relationships.workspace.data.id;
    return this.act(
      profile.id,
      () =>
        deleteFederationProfile({ client: this.page.api, path: { workspace_id: workspaceId, profile_id: profile.id } }),
      `Deleted ${profile.attributes.name}.`,
    );
  }

  private async setPlanRequirement(loaded: LoadedWorkspace, value: boolean): Promise<void> {
    this.planPending = value;
    await this.act(
      "plan",
      () =>
        updateWorkspace({
          client: this.page.api,
          path: { workspace_id: loaded.workspace.id },
          body: { data: { type: "workspaces", attributes: { plan_requires_credential: value } } },
        }),
      value ? "Plans now need a cloud credential." : "Plans no longer need a cloud credential.",
    );
    this.planPending = null;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-cloud-access-page": SsWorkspaceCloudAccessPage;
  }
}
