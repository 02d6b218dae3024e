// Reading the text fields of a submitted form.

/** A text field of the form: its value, or "" when the form has no field of that name. */
export function formText(data: FormData, name: string): string {
  const value = data.get(name);
  return typeof value === "string" ? value : "";
}

/** A submitted form, read: the form, its data, and a text field by name with white space trimmed. */
export interface SubmittedForm {
  form: HTMLFormElement;
  data: FormData;
  trimmed(name: string): string;
}

/** Takes over a form's submission (the browser does not load a page) and reads what was submitted. */
export function takeSubmit(event: SubmitEvent): SubmittedForm {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const data = new FormData(form);
  return { form, data, trimmed: (name) => formText(data, name).trim() };
}
