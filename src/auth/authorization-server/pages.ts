/** Server-rendered sign-in and consent pages: no scripts, no external assets, readable on a phone. */

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2330}
main{max-width:26rem;margin:8vh auto;padding:1.5rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}
p{margin:.5rem 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password]{width:100%;padding:.7rem;font-size:1rem;border:1px solid #b8bfcc;border-radius:.5rem}
button{width:100%;padding:.8rem;margin-top:1rem;font-size:1rem;font-weight:600;border:0;border-radius:.5rem;background:#2957d6;color:#fff;cursor:pointer}
button.secondary{background:#e4e7ee;color:#1d2330}
ul{padding-left:1.2rem}
fieldset{border:1px solid #d5d9e2;border-radius:.5rem;margin:1rem 0;padding:.5rem .9rem}
legend{font-weight:600;padding:0 .3rem}
label.choice{font-weight:400;margin:.4rem 0;display:flex;gap:.5rem;align-items:baseline}
label.choice.inner{margin-left:1.6rem}
.error{background:#fdecec;color:#8a1f1f;padding:.6rem .8rem;border-radius:.5rem}
.muted{color:#5b6475;font-size:.9rem;word-break:break-all}
`;

/** Security headers for every page: no framing (clickjacking), no caching, no referrer leaking the request. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // No form-action: the final redirect goes to the client's own callback, which Chrome checks against it.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

export interface ClientView {
  readonly name: string;
  /** Where the browser goes afterwards: shown so a user can spot a look-alike client. */
  readonly redirectHost: string;
  /** For a client identified by its metadata document's URL: the host that published it. */
  readonly publishedBy?: string;
}

function clientLines(client: ClientView): string {
  const published = client.publishedBy === undefined ? '' : `<p class="muted">Its description is published by ${escapeHtml(client.publishedBy)}</p>\n`;
  return `${published}<p class="muted">It will return to ${escapeHtml(client.redirectHost)}</p>`;
}

export function loginPage(options: {
  readonly action: string;
  readonly csrf: string;
  readonly client: ClientView;
  readonly username?: string;
  readonly error?: string;
}): string {
  return page(
    'Sign in · memory-service',
    `<h1>Sign in to memory-service</h1>
<p><strong>${escapeHtml(options.client.name)}</strong> wants to use your memory.</p>
${clientLines(options.client)}
${options.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(options.error)}</p>`}
<form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<label for="username">User name</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(options.username ?? '')}"${options.username ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${options.username ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>`,
  );
}

const SCOPE_TEXT: Readonly<Record<string, string>> = {
  'memory:read': 'Read your memories (recall, list)',
  'memory:write': 'Add, correct and forget memories',
};

/** One of a person's spaces as the consent page shows it. */
export interface PersonSpace {
  /** The scope limiting a token to it: `space:personal`, or the space's id. */
  readonly scope: string;
  readonly name: string;
  readonly role: string;
}

/**
 * The spaces part of the consent page: the spaces a client asked for by their scopes (with those that are not
 * the person's, which they cannot allow), or, when it asked for none, the person's spaces to choose from.
 */
export type ConsentSpaces =
  | { readonly kind: 'named'; readonly spaces: readonly PersonSpace[]; readonly notYours: readonly string[] }
  | { readonly kind: 'choice'; readonly spaces: readonly PersonSpace[]; readonly ticked: readonly string[] };

const ROLE_TEXT: Readonly<Record<string, string>> = { owner: 'yours', writer: 'you may write', reader: 'you may only read' };

function spaceLabel(space: PersonSpace): string {
  return `${escapeHtml(space.name)} <span class="muted">(${escapeHtml(ROLE_TEXT[space.role] ?? space.role)})</span>`;
}

function spacesPart(spaces: ConsentSpaces): string {
  if (spaces.kind === 'named') {
    const items = spaces.spaces.map((space) => `<li>${spaceLabel(space)}</li>`).join('\n');
    const refused =
      spaces.notYours.length === 0
        ? ''
        : `<p class="error" role="alert">It also asks for spaces you are not a member of (${escapeHtml(spaces.notYours.join(', '))}); you can only deny.</p>\n`;
    return `<p>Only in ${spaces.spaces.length === 1 ? 'this space' : 'these spaces'}:</p>\n<ul class="spaces">\n${items}\n</ul>\n${refused}`;
  }
  const checked = (on: boolean) => (on ? ' checked' : '');
  const some = spaces.spaces.some((space) => spaces.ticked.includes(space.scope));
  const choices = spaces.spaces
    .map(
      (space) =>
        `<label class="choice inner"><input type="checkbox" name="space" value="${escapeHtml(space.scope)}"${checked(spaces.ticked.includes(space.scope))}> ${spaceLabel(space)}</label>`,
    )
    .join('\n');
  return `<fieldset>
<legend>In which spaces?</legend>
<label class="choice"><input type="radio" name="spaces" value="all"${checked(!some)}> All my spaces, including ones I join later</label>
<label class="choice"><input type="radio" name="spaces" value="some"${checked(some)}> Only these:</label>
${choices}
</fieldset>`;
}

export function consentPage(options: {
  readonly action: string;
  readonly csrf: string;
  readonly client: ClientView;
  readonly userName: string;
  readonly scopes: readonly string[];
  readonly spaces: ConsentSpaces;
  readonly error?: string;
}): string {
  const items = options.scopes.map((scope) => `<li>${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`).join('\n');
  const allowed = options.spaces.kind === 'choice' || options.spaces.notYours.length === 0;
  const spaces = spacesPart(options.spaces);
  return page(
    'Allow access · memory-service',
    `<h1>Allow access?</h1>
<p><strong>${escapeHtml(options.client.name)}</strong> asks to use the memory of <strong>${escapeHtml(options.userName)}</strong>:</p>
<ul>
${items}
</ul>
${options.spaces.kind === 'named' ? spaces : ''}${clientLines(options.client)}
${options.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(options.error)}</p>`}
<form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
${options.spaces.kind === 'choice' ? spaces : ''}
${allowed ? '<button type="submit" name="decision" value="allow">Allow</button>\n' : ''}<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(`${title} · memory-service`, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
