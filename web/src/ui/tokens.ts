// The dashboard's design tokens, in one place: surfaces (including the ink surface of log tails
// and consoles), the four intents (danger, attention, success, info), the monospace stack,
// spacing and radius; light and dark through prefers-color-scheme. Every element's styles use
// these custom properties and nothing else for colour.
import { css } from "lit";

/** Applied once at the app root (custom properties inherit through shadow roots). */
export const tokens = css`
  :host {
    --ss-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
    --ss-mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
    --ss-space-1: 4px;
    --ss-space-2: 8px;
    --ss-space-3: 12px;
    --ss-space-4: 16px;
    --ss-space-6: 24px;
    --ss-radius: 6px;

    --ss-bg: #ffffff;
    --ss-surface: #f6f7f9;
    --ss-border: #d0d5dd;
    --ss-text: #1a1d23;
    --ss-text-muted: #555c68;
    --ss-link: #0b57b8;
    --ss-focus: #0b57b8;

    --ss-ink-bg: #14171c;
    --ss-ink-text: #e6e8eb;

    --ss-danger: #b42318;
    --ss-danger-bg: #fdecea;
    --ss-attention: #8a4b00;
    --ss-attention-bg: #fff4e0;
    --ss-success: #1e6b34;
    --ss-success-bg: #e7f5ea;
    --ss-info: #0b57b8;
    --ss-info-bg: #e6f0fb;
    --ss-neutral: #555c68;
    --ss-neutral-bg: #eef0f3;

    color-scheme: light dark;
    font-family: var(--ss-font);
    color: var(--ss-text);
    background: var(--ss-bg);
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --ss-bg: #101317;
      --ss-surface: #181c22;
      --ss-border: #394150;
      --ss-text: #e8eaed;
      --ss-text-muted: #a9b0bb;
      --ss-link: #8ab8f5;
      --ss-focus: #8ab8f5;
      --ss-ink-bg: #05070a;
      --ss-ink-text: #e6e8eb;
      --ss-danger: #ff9b8f;
      --ss-danger-bg: #3a1512;
      --ss-attention: #f5c26b;
      --ss-attention-bg: #352610;
      --ss-success: #86d49a;
      --ss-success-bg: #12301b;
      --ss-info: #8ab8f5;
      --ss-info-bg: #122540;
      --ss-neutral: #a9b0bb;
      --ss-neutral-bg: #232831;
    }
  }
`;

/** Shared element basics: links, buttons, inputs, focus rings, tables, the ink surface. */
export const base = css`
  :host {
    font-family: var(--ss-font);
    color: var(--ss-text);
  }
  a {
    color: var(--ss-link);
  }
  :focus-visible {
    outline: 2px solid var(--ss-focus);
    outline-offset: 2px;
  }
  button,
  input,
  select,
  textarea {
    font: inherit;
    color: inherit;
    /* A select sized by its longest option, or an input with a min-width, never widens a phone's page. */
    max-width: 100%;
  }
  button {
    border: 1px solid var(--ss-border);
    background: var(--ss-surface);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-1) var(--ss-space-3);
    cursor: pointer;
  }
  button.primary {
    background: var(--ss-info);
    border-color: var(--ss-info);
    color: var(--ss-bg);
  }
  button.danger {
    background: var(--ss-danger);
    border-color: var(--ss-danger);
    color: var(--ss-bg);
  }
  /* A consequential but not primary action (Cancel run, Force unlock): outlined, in the danger colour. */
  button.secondary {
    background: transparent;
    border-color: var(--ss-danger);
    color: var(--ss-danger);
  }
  button:disabled {
    opacity: 0.6;
    cursor: not-allowed;
  }
  input,
  select,
  textarea {
    background: var(--ss-bg);
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-1) var(--ss-space-2);
  }
  .mono,
  code {
    font-family: var(--ss-mono);
  }
  .muted {
    color: var(--ss-text-muted);
  }
  .ink {
    background: var(--ss-ink-bg);
    color: var(--ss-ink-text);
    font-family: var(--ss-mono);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3);
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .notice {
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3) var(--ss-space-4);
    border: 1px solid var(--ss-border);
    background: var(--ss-surface);
  }
  .notice.danger {
    background: var(--ss-danger-bg);
    border-color: var(--ss-danger);
    color: var(--ss-text);
  }
  .notice.attention {
    background: var(--ss-attention-bg);
    border-color: var(--ss-attention);
  }
  .notice.info {
    background: var(--ss-info-bg);
    border-color: var(--ss-info);
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
