import { css } from "lit";

/** Every row of the virtualized list has this height (px); the list positions rows by it. */
export const ROW_HEIGHT = 32;

export const planChangesStyles = css`
  :host {
    display: block;
  }
  .filters {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2) var(--ss-space-4);
    align-items: end;
    margin-bottom: var(--ss-space-2);
  }
  .filters label {
    display: grid;
    gap: 2px;
    font-size: 0.8125rem;
  }
  .filters input {
    min-width: 18rem;
  }
  .count {
    font-size: 0.8125rem;
    color: var(--ss-text-muted);
  }
  .viewport {
    height: 384px;
    overflow-y: auto;
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    position: relative;
    contain: strict;
  }
  .rows {
    position: relative;
  }
  .row {
    position: absolute;
    left: 0;
    right: 0;
    height: ${ROW_HEIGHT}px;
    box-sizing: border-box;
    display: block;
  }
  .row button {
    width: 100%;
    height: 100%;
    display: grid;
    grid-template-columns: 9rem minmax(0, 1fr) minmax(0, 16rem);
    gap: var(--ss-space-2);
    align-items: center;
    text-align: left;
    border: 0;
    border-bottom: 1px solid var(--ss-border);
    border-radius: 0;
    background: transparent;
    padding: 0 var(--ss-space-2);
  }
  .row button[aria-pressed="true"] {
    background: var(--ss-info-bg);
  }
  .address {
    font-family: var(--ss-mono);
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .provider {
    color: var(--ss-text-muted);
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
    font-size: 0.8125rem;
  }
  .action {
    font-size: 0.8125rem;
    font-weight: 600;
  }
  .a-create { color: var(--ss-success); }
  .a-update { color: var(--ss-info); }
  .a-delete, .a-replace, .a-forget_replace { color: var(--ss-danger); }
  .a-forget { color: var(--ss-attention); }
  .a-unknown { color: var(--ss-danger); }
  .detail {
    margin-top: var(--ss-space-3);
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3);
  }
  .detail h4 {
    margin: 0 0 var(--ss-space-2);
    font-family: var(--ss-mono);
    font-size: 0.9375rem;
    overflow-wrap: anywhere;
  }
  table {
    border-collapse: collapse;
    width: 100%;
    font-size: 0.8125rem;
  }
  th,
  td {
    text-align: left;
    border-bottom: 1px solid var(--ss-border);
    padding: var(--ss-space-1) var(--ss-space-2);
    vertical-align: top;
    overflow-wrap: anywhere;
  }
  td.value {
    font-family: var(--ss-mono);
  }
  tr.changed td.path {
    font-weight: 600;
  }
  .marker {
    font-style: italic;
    color: var(--ss-attention);
  }
  .tag {
    font-size: 0.75rem;
    border: 1px solid currentColor;
    border-radius: 999px;
    padding: 0 var(--ss-space-1);
    margin-left: var(--ss-space-1);
    white-space: nowrap;
  }
  .notes {
    display: grid;
    gap: var(--ss-space-2);
    margin-bottom: var(--ss-space-2);
  }
  .notes p {
    margin: 0;
  }
`;
