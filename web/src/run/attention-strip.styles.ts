import { css } from "lit";

export const attentionStripStyles = css`
  :host {
    display: block;
  }
  section {
    border: 1px solid var(--ss-attention);
    background: var(--ss-attention-bg);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3) var(--ss-space-4);
    display: grid;
    gap: var(--ss-space-3);
  }
  h2 {
    font-size: 1rem;
    margin: 0;
  }
  p {
    margin: 0;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  .confirm {
    display: grid;
    gap: var(--ss-space-2);
    border-top: 1px solid var(--ss-attention);
    padding-top: var(--ss-space-3);
  }
  textarea {
    width: 100%;
    box-sizing: border-box;
    min-height: 4em;
  }
  label {
    font-weight: 600;
  }
  .error {
    color: var(--ss-danger);
  }
  .destroy {
    font-weight: 700;
    color: var(--ss-danger);
  }
`;
