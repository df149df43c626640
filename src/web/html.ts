import { escapeHtml } from '../auth/authorization-server/pages.js';

/**
 * HTML built by a tagged template that escapes every interpolated value, so a memory's text can never become
 * markup. Only `Html` values (the result of `html`…`` or `raw`) are inserted as they are; arrays are joined;
 * undefined, null and false render as nothing.
 */
export class Html {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value instanceof Html) return value.toString();
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  for (const [index, value] of values.entries()) out += render(value) + (strings[index + 1] ?? '');
  return new Html(out);
}

/** Markup written by us, never by a user (a constant). */
export const raw = (text: string): Html => new Html(text);
