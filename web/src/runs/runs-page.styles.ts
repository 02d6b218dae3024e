import { css } from "lit";
import { dataTable, filterBar } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const runsPageStyles = [
  base,
  dataTable,
  filterBar,
  css`
    :host {
      display: block;
    }
    .filters input {
      min-width: 280px;
    }
    th,
    td {
      vertical-align: top;
    }
    th {
      font-size: 0.85em;
      color: var(--ss-text-muted);
    }
    .run-id {
      font-size: 0.8em;
    }
    .facts {
      display: flex;
      flex-wrap: wrap;
      gap: 0 var(--ss-space-2);
      align-items: baseline;
      font-size: 0.85em;
    }
    .tag {
      border: 1px solid var(--ss-border);
      border-radius: var(--ss-radius);
      padding: 0 var(--ss-space-1);
      white-space: nowrap;
    }
    .changes {
      white-space: nowrap;
      font-variant-numeric: tabular-nums;
    }
    .counts .create {
      color: var(--ss-success);
    }
    .counts .change {
      color: var(--ss-attention);
    }
    .counts .destroy {
      color: var(--ss-danger);
    }
    .duration {
      font-variant-numeric: tabular-nums;
      white-space: nowrap;
    }
    #load-more {
      margin-top: var(--ss-space-3);
    }
    /* A phone: each run is a card (message first, then its facts), nothing scrolls sideways. */
    @media (max-width: 600px) {
      .filters input,
      .filters select {
        min-width: 0;
        width: 100%;
        max-width: 100%;
        box-sizing: border-box;
      }
      .filters label {
        flex: 1 1 100%;
      }
      table,
      tbody,
      tr,
      td {
        display: block;
      }
      thead {
        position: absolute;
        width: 1px;
        height: 1px;
        overflow: hidden;
        clip: rect(0 0 0 0);
      }
      tr {
        border: 1px solid var(--ss-border);
        border-radius: var(--ss-radius);
        padding: var(--ss-space-2) var(--ss-space-3);
        margin-bottom: var(--ss-space-2);
        background: var(--ss-surface);
      }
      td {
        border: none;
        padding: 2px 0;
        overflow-wrap: anywhere;
      }
      td[data-label]::before {
        content: attr(data-label) " ";
        color: var(--ss-text-muted);
        font-size: 0.85em;
      }
    }
  `,
];
