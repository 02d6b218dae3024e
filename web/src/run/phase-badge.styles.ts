import { css } from "lit";

export const phaseBadgeStyles = css`
  :host {
    display: inline-flex;
  }
  .badge {
    display: inline-flex;
    align-items: center;
    gap: var(--ss-space-1);
    border: 1px solid currentColor;
    border-radius: 999px;
    padding: 1px var(--ss-space-2);
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
`;
