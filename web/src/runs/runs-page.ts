import { LitElement, html } from "lit";
import { customElement } from "lit/decorators.js";

@customElement("ss-runs-page")
export class SsRunsPage extends LitElement {
  override render() {
    return html`<h1>Runs</h1>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-runs-page": SsRunsPage;
  }
}
