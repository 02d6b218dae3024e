// PLACEHOLDER created by the dashboard-shell helper so the app builds; the run-page helper owns
// this file and replaces it with the real run page.
import { LitElement, html } from "lit";
import { customElement, property } from "lit/decorators.js";

@customElement("ss-run-page")
export class SsRunPage extends LitElement {
  @property({ attribute: "run-id" }) accessor runId = "";

  override render() {
    return html`<h1>Run <code>${this.runId}</code></h1>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-run-page": SsRunPage;
  }
}
