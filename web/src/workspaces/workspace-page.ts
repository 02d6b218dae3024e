import { LitElement, html } from "lit";
import { customElement, property } from "lit/decorators.js";

@customElement("ss-workspace-page")
export class SsWorkspacePage extends LitElement {
  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  override render() {
    return html`<h1>${this.workspaceId}</h1>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-page": SsWorkspacePage;
  }
}
