/** Small inline icons; each is decorative (aria-hidden) because a text label always stands beside it. */
import { svg, html, type TemplateResult } from "lit";
import type { Tone } from "./review-model.ts";

const paths: Record<Tone | "error", ReturnType<typeof svg>> = {
  // a clock: pending and running
  info: svg`<circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/>`,
  // a check mark: finished
  success: svg`<circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M5 8.2l2 2 4-4.4" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round"/>`,
  // a slashed circle: canceled
  attention: svg`<circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M3.8 12.2l8.4-8.4" stroke="currentColor" stroke-width="1.5"/>`,
  // a cross: errored, interrupted
  danger: svg`<circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M5.5 5.5l5 5M10.5 5.5l-5 5" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/>`,
  // a dash: skipped, not reached
  neutral: svg`<circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M5 8h6" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/>`,
  // a question mark in a triangle: a value outside the closed set
  error: svg`<path d="M8 1.8l6.6 12H1.4z" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round"/><path d="M8 6v3.6" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/><circle cx="8" cy="11.8" r="0.9" fill="currentColor"/>`,
};

/** The icon of a tone, or of an unknown value. */
export function icon(tone: Tone | "error"): TemplateResult {
  return html`<svg viewBox="0 0 16 16" aria-hidden="true" focusable="false">${paths[tone]}</svg>`;
}
