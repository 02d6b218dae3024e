import { css } from "lit";

export const runConsoleStyles = css`
  :host {
    display: block;
    /* A long line scrolls inside the console: its width never widens the stage, the page or a phone's viewport. */
    contain: inline-size;
  }
  .bar {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    justify-content: space-between;
    gap: var(--ss-space-2);
    margin-bottom: var(--ss-space-1);
    font-size: 0.8125rem;
  }
  .tools {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--ss-space-1);
    min-width: 0;
  }
  .tools input {
    width: 12rem;
    max-width: 100%;
    font: inherit;
  }
  .count:empty,
  [data-testid="console-copied"]:empty {
    display: none;
  }
  .frame {
    position: relative;
  }
  .scroll {
    display: flex;
    align-items: flex-start;
    max-height: 420px;
    overflow: auto;
    overscroll-behavior: contain;
    padding: 0;
    white-space: normal;
  }
  pre {
    margin: 0;
    font-size: 0.8125rem;
    line-height: 1.45;
    background: none;
    padding: 0;
  }
  pre[data-console] {
    flex: 1 0 auto;
    padding: var(--ss-space-2);
    outline-offset: -2px;
  }
  .wrap pre[data-console] {
    flex: 1 1 auto;
    min-width: 0;
    white-space: pre-wrap;
    overflow-wrap: anywhere;
  }
  .gutter {
    position: sticky;
    left: 0;
    flex: none;
    padding: var(--ss-space-2) var(--ss-space-2) var(--ss-space-2) var(--ss-space-1);
    text-align: right;
    user-select: none;
    color: var(--ss-ink-text);
    opacity: 0.65;
    background: var(--ss-ink-bg);
    border-right: 1px solid color-mix(in srgb, currentColor 20%, transparent);
  }
  .jump {
    position: absolute;
    right: var(--ss-space-3);
    bottom: var(--ss-space-2);
  }
  ::highlight(ss-console-match) {
    background-color: #6b5b00;
    color: #fff;
  }
  ::highlight(ss-console-current) {
    background-color: #ffd33d;
    color: #111;
  }
  .error {
    color: var(--ss-danger);
  }
`;
