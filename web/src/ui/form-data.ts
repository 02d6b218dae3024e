// Reading the text fields of a submitted form.

/** A text field of the form: its value, or "" when the form has no field of that name. */
export function formText(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === "string" ? value : "";
}
