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
    display: flex;
    align-items: stretch;
    border-bottom: 1px solid var(--ss-border);
  }
  .row.group {
    align-items: center;
    gap: var(--ss-space-2);
    padding: 0 var(--ss-space-2);
    background: var(--ss-surface);
    font-weight: 600;
    font-size: 0.8125rem;
  }
  .group-name {
    font-family: var(--ss-mono);
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
    min-width: 0;
  }
  .row button.open {
    flex: 1 1 auto;
    min-width: 0;
    height: 100%;
    display: grid;
    grid-template-columns: 9rem minmax(0, 1fr) minmax(0, 16rem);
    gap: var(--ss-space-2);
    align-items: center;
    text-align: left;
    border: 0;
    border-radius: 0;
    background: transparent;
    padding: 0 var(--ss-space-2);
  }
  .row button.open:focus-visible {
    outline: 2px solid var(--ss-focus, #0b57b8);
    outline-offset: -2px;
  }
  .row button.open[aria-pressed="true"] {
    background: var(--ss-info-bg);
  }
  button.copy,
  button.close,
  button.fold {
    font-size: 0.75rem;
    padding: 0 var(--ss-space-2);
    white-space: nowrap;
  }
  .row button.copy {
    flex: 0 0 auto;
    margin: 3px var(--ss-space-1);
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
  .sym {
    display: inline-block;
    min-width: 1ch;
    font-family: var(--ss-mono);
    font-weight: 700;
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
  .layout {
    display: block;
  }
  .detail {
    margin-top: var(--ss-space-3);
    min-width: 0;
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3);
  }
  .detail-head {
    display: flex;
    gap: var(--ss-space-2);
    align-items: start;
    margin-bottom: var(--ss-space-2);
  }
  .detail-head button {
    flex: 0 0 auto;
  }
  .detail h4 {
    flex: 1 1 auto;
    min-width: 0;
    margin: 0;
    font-family: var(--ss-mono);
    font-size: 0.9375rem;
    overflow-wrap: anywhere;
  }
  table {
    table-layout: fixed;
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
  tr.c-added td.path,
  tr.c-removed td.path,
  tr.c-changed td.path {
    font-weight: 600;
  }
  tr.c-added .sym { color: var(--ss-success); }
  tr.c-removed .sym { color: var(--ss-danger); }
  tr.c-changed .sym { color: var(--ss-info); }
  td.path .sym {
    margin-right: var(--ss-space-1);
  }
  button.fold {
    margin-top: var(--ss-space-2);
  }
  /* Wide screens: the detail beside the list, scrolling on its own. */
  @media (min-width: 1100px) {
    .layout.with-detail {
      display: grid;
      grid-template-columns: minmax(0, 1fr) minmax(0, 1fr);
      gap: var(--ss-space-3);
      align-items: start;
    }
    /* The provider is in the detail: the list's rows keep their width for the address. */
    .layout.with-detail .row button.open {
      grid-template-columns: 9rem minmax(0, 1fr);
    }
    .layout.with-detail .row button.open .provider {
      display: none;
    }
    .layout.with-detail .detail {
      margin-top: 0;
      max-height: 384px;
      overflow: auto;
      box-sizing: border-box;
    }
  }
  /* Phones: the address first on each row, one line; nothing wider than the screen. */
  @media (max-width: 600px) {
    .filters input {
      min-width: 0;
      width: 100%;
      box-sizing: border-box;
    }
    .filters label {
      flex: 1 1 100%;
    }
    .row button.open {
      grid-template-columns: minmax(0, 1fr) auto;
    }
    .row button.open .address {
      order: -1;
    }
    .row button.open .provider {
      display: none;
    }
    th,
    td {
      padding: var(--ss-space-1);
    }
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
