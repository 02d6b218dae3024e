// The `pattern` attributes of name inputs, one place. Chromium compiles `pattern` with the
// regular expression `v` flag, where a bare `-` inside a character class is a syntax error: the
// browser then logs it and validates nothing. Hence `\-`.

/** An organization name: a letter or digit, then up to 39 letters, digits, `_` or `-` (the API's rule). */
export const ORGANIZATION_NAME_PATTERN = String.raw`[A-Za-z0-9][A-Za-z0-9_\-]{0,39}`;

/** A workspace name: a letter or digit, then letters, digits, `_` or `-`. */
export const WORKSPACE_NAME_PATTERN = String.raw`[A-Za-z0-9][A-Za-z0-9_\-]*`;
