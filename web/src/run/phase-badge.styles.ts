import { css } from "lit";
import { pill } from "../ui/shared-styles.ts";

/** After `pill(".badge")`. */
export const phaseBadgeStyles = [
  pill(".badge"),
  css`
  :host {
    display: inline-flex;
  }
  .badge {
    font-size: 0.875rem;
    line-height: 1.4;
    white-space: nowrap;
  }
  svg {
    width: 14px;
    height: 14px;
    flex: none;
  }
  .label {
    font-weight: 600;
  }
  .info {
    color: var(--ss-info);
    background: var(--ss-info-bg);
  }
  .success {
    color: var(--ss-success);
    background: var(--ss-success-bg);
  }
  .attention {
    color: var(--ss-attention);
    background: var(--ss-attention-bg);
  }
  .danger,
  .unknown {
    color: var(--ss-danger);
    background: var(--ss-danger-bg);
  }
  .unknown {
    border-style: dashed;
  }
`,
];
