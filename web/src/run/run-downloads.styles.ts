import { css } from "lit";

export const runDownloadsStyles = css`
  :host {
    display: block;
  }
  h2 {
    font-size: 1.125rem;
    margin: 0 0 var(--ss-space-2);
  }
  .items {
    display: grid;
    gap: var(--ss-space-3);
  }
  form {
    display: grid;
    gap: var(--ss-space-2);
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3);
  }
  h3 {
    font-size: 1rem;
    margin: 0;
  }
  p {
    margin: 0;
  }
  label {
    font-weight: 600;
  }
  input[type="text"] {
    width: 100%;
    box-sizing: border-box;
  }
  .row {
    display: flex;
    gap: var(--ss-space-2);
    align-items: center;
    flex-wrap: wrap;
  }
  .error {
    color: var(--ss-danger);
  }
`;
