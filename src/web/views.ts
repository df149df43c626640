import type { ImportSummary, ListedMemory, Memory, TagCount, TombstoneRecord } from '../memory/types.js';
import type { SpaceDetails } from '../spaces/space-service.js';
import type { AccessibleSpace } from '../spaces/spaces.js';
import { refusalPlace } from '../transfer/import-file.js';
import { STYLESHEET_PATH } from './assets.js';
import { html, raw, type Html } from './html.js';

/**
 * The page's screens, server-rendered: every value goes through `html` (escaped), every form posts its CSRF
 * token, and nothing needs a script. Paths: `/` (memories, search, tag filter), `/memories/:id`, `/history`
 * (tombstones), `/data` (export, import, delete everything), each of one space (`?space=<id>`, personal by
 * default); `/spaces` and `/spaces/:id` (spaces, members and roles).
 */

export type Section = 'memories' | 'history' | 'data' | 'spaces';

export interface Chrome {
  /** Undefined when signed out. */
  readonly csrf: string | undefined;
  readonly section?: Section | undefined;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

const SECTIONS: readonly [Section, string, string][] = [
  ['memories', '/', 'Memories'],
  ['history', '/history', 'Corrected & forgotten'],
  ['data', '/data', 'Your data'],
  ['spaces', '/spaces', 'Spaces'],
];

/** `path` in `space` (the personal space needs no parameter). */
export function inSpace(path: string, space: AccessibleSpace, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ...(space.personal ? {} : { space: space.id }), ...extra }).toString();
  return query === '' ? path : `${path}?${query}`;
}

const spaceField = (space: AccessibleSpace): Html => (space.personal ? html`` : html`<input type="hidden" name="space" value="${space.id}">`);

const ROLE_LABELS: Record<AccessibleSpace['role'], string> = { owner: 'owner', writer: 'writer', reader: 'reader (can read, not change)' };

/** Which space a screen shows, and a way to switch to another one (a GET form: no script). */
function spaceBar(spaces: readonly AccessibleSpace[], current: AccessibleSpace, action: string): Html {
  // Nothing to choose between for someone with their personal space alone.
  if (spaces.length < 2) return html``;
  return html`<form class="space-bar" method="get" action="${action}">
<label for="space">Space</label>
<select id="space" name="space">${spaces.map((space) => html`<option value="${space.id}"${space.id === current.id ? html` selected` : ''}>${space.name}${space.personal ? '' : ` (${space.role})`}</option>`)}</select>
<button type="submit" class="secondary">Show</button>
${current.personal ? '' : html`<span class="small muted">You are <strong>${ROLE_LABELS[current.role]}</strong> in “${current.name}”. <a href="/spaces/${current.id}">Members</a></span>`}
</form>`;
}

export function layout(title: string, chrome: Chrome, body: Html): string {
  const signedIn = chrome.csrf !== undefined;
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · memory-service</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar">
<a class="brand" href="/">memory-service</a>
${
  signedIn
    ? html`<nav aria-label="Main"><ul>${SECTIONS.map(
        ([section, href, label]) => html`<li><a href="${href}"${chrome.section === section ? html` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul></nav>
<div class="account"><span class="who">${IDENTITY_SLOT}</span>
<form method="post" action="/auth/sign-out">${csrfField(chrome.csrf)}<button type="submit" class="secondary">Sign out</button></form></div>`
    : ''
}
</div></header>
<main id="main">
${chrome.notice === undefined ? '' : html`<p class="notice" role="status">${chrome.notice}</p>`}
${chrome.error === undefined ? '' : html`<p class="error" role="alert">${chrome.error}</p>`}
${body}
</main>
</body>
</html>
`}`;
}

/**
 * Where a signed-in screen says who is signed in: filled by `withIdentity` as the screen is sent, so no view has to
 * carry the name. Memory text cannot forge it: `<` is escaped wherever a value is inserted.
 */
const IDENTITY_SLOT = raw('<!--signed-in-as-->');

/** The screen with its identity slot filled: "Signed in as <name>". */
export function withIdentity(page: string, name: string): string {
  return page.replace(IDENTITY_SLOT.toString(), () => html`Signed in as <strong>${name}</strong>`.toString());
}

const csrfField = (csrf: string | undefined): Html => html`<input type="hidden" name="csrf" value="${csrf ?? ''}">`;

/** "2026-01-05 14:03 UTC" in a <time> element. */
function when(date: Date): Html {
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Facts not confirmed for this long are marked, so stale ones stand out. */
const STALE_DAYS = 180;

function staleness(memory: Memory, now: Date): Html {
  if (memory.expiresAt !== null && memory.expiresAt <= now) return html`<span class="badge warn">expired</span>`;
  const days = Math.floor((now.getTime() - memory.lastConfirmedAt.getTime()) / DAY_MS);
  if (days < STALE_DAYS) return html``;
  return html`<span class="badge warn">not confirmed for ${Math.floor(days / 30)} months</span>`;
}

function tagLinks(tags: readonly string[], space: AccessibleSpace): Html {
  if (tags.length === 0) return html``;
  return html`<ul class="tags" aria-label="Tags">${tags.map((tag) => html`<li><a class="tag" href="${inSpace('/', space, { tag })}">${tag}</a></li>`)}</ul>`;
}

const canWrite = (space: AccessibleSpace): boolean => space.role !== 'reader';

/**
 * The texts an assistant gave later that were judged to state this memory's fact (kept as its restatements), each
 * with the way to make it a memory of its own: a judgement that was wrong hides a fact, and this brings it back.
 */
function restatementList(memory: Memory | ListedMemory, csrf: string, writable: boolean): Html {
  if (!('restatements' in memory) || memory.restatements.length === 0) return html``;
  return html`<div class="restatements">
<p class="small muted">Also said as:</p>
<ul>${memory.restatements.map(
    (restatement) => html`<li id="restatement-${restatement.id}"><p class="memory-text">${restatement.text}</p>
<p class="meta"><span>Said ${when(restatement.createdAt)}</span></p>
${writable ? html`<form method="post" action="/restatements/${restatement.id}/separate">${csrfField(csrf)}<button type="submit" class="secondary">Make this a memory of its own</button></form>` : ''}</li>`,
  )}</ul>
</div>`;
}

function memoryItem(memory: Memory | ListedMemory, csrf: string, now: Date, space: AccessibleSpace): Html {
  const label = html`<span class="visually-hidden"> memory ${memory.id}</span>`;
  const writable = canWrite(space);
  return html`<li class="card" id="memory-${memory.id}">
<p class="memory-text">${memory.text}</p>
${tagLinks(memory.tags, space)}
<p class="meta"><span>Memory ${memory.id}</span><span>Stored ${when(memory.createdAt)}</span><span>Confirmed ${when(memory.lastConfirmedAt)}</span>${staleness(memory, now)}</p>
${restatementList(memory, csrf, writable)}
<div class="actions">
${
  writable
    ? html`<a class="button secondary" href="/memories/${memory.id}">Edit${label}</a>
<form method="post" action="/memories/${memory.id}/confirm">${csrfField(csrf)}<button type="submit" class="secondary">Still true${label}</button></form>
<form method="post" action="/memories/${memory.id}/forget">${csrfField(csrf)}<button type="submit" class="danger quiet">Forget${label}</button></form>`
    : html`<a class="button secondary" href="/memories/${memory.id}">Details${label}</a>`
}
</div>
</li>`;
}

export interface MemoriesView {
  readonly csrf: string;
  readonly space: AccessibleSpace;
  readonly spaces: readonly AccessibleSpace[];
  readonly memories: readonly (Memory | ListedMemory)[];
  readonly tags: readonly TagCount[];
  readonly query: string;
  readonly tag: string;
  /** Link to the next page (older memories); undefined on the last page or for search results. */
  readonly nextHref: string | undefined;
  readonly firstPage: boolean;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

export function memoriesPage(view: MemoriesView): string {
  const now = new Date();
  const searching = view.query !== '';
  const { space } = view;
  const heading = searching
    ? 'Search results'
    : view.tag !== ''
      ? html`Memories tagged “${view.tag}”`
      : space.personal
        ? html`Your memories`
        : html`Memories in “${space.name}”`;
  const empty = searching
    ? 'Nothing matches this search.'
    : view.firstPage
      ? view.tag !== ''
        ? 'No memory carries this tag.'
        : space.personal || canWrite(space)
          ? 'No memories yet. Assistants connected to this service add them; you can also import a file under “Your data”.'
          : 'No memories in this space yet.'
      : 'No older memories.';
  return layout(
    searching ? 'Search' : 'Memories',
    { csrf: view.csrf, section: 'memories', notice: view.notice, error: view.error },
    html`${spaceBar(view.spaces, space, '/')}
<h1>${heading}</h1>
<form class="search" method="get" action="/" role="search">
<div><label for="q">Search ${space.personal ? 'your memories' : html`“${space.name}”`} <span class="hint">by meaning and by words, as an assistant's recall does</span></label>
<input id="q" name="q" type="search" maxlength="1000" value="${view.query}"></div>
${spaceField(space)}
${view.tag === '' ? '' : html`<input type="hidden" name="tag" value="${view.tag}">`}
<button type="submit">Search</button>
</form>
<form class="filters" method="get" action="/">
${spaceField(space)}
${view.query === '' ? '' : html`<input type="hidden" name="q" value="${view.query}">`}
<label for="tag">Tag</label>
<select id="tag" name="tag">
<option value="">All tags</option>
${view.tags.map((tag) => html`<option value="${tag.tag}"${tag.tag === view.tag ? html` selected` : ''}>${tag.tag} (${tag.memories})</option>`)}
${view.tag !== '' && !view.tags.some((tag) => tag.tag === view.tag) ? html`<option value="${view.tag}" selected>${view.tag}</option>` : ''}
</select>
<button type="submit" class="secondary">Filter</button>
${searching || view.tag !== '' ? html`<a href="${inSpace('/', space)}">Show all, newest first</a>` : ''}
</form>
${searching ? html`<p class="muted small">Best match first${view.tag === '' ? '' : html`, only memories tagged “${view.tag}”`}.</p>` : html`<p class="muted small">Newest first, expired ones included.</p>`}
${
  view.memories.length === 0
    ? html`<p class="card">${empty}</p>`
    : html`<ol class="memories">${view.memories.map((memory) => memoryItem(memory, view.csrf, now, space))}</ol>`
}
<nav class="pager" aria-label="Pages">
<span>${view.firstPage ? '' : html`<a href="${inSpace('/', space, view.tag === '' ? {} : { tag: view.tag })}">Newest</a>`}</span>
<span>${view.nextHref === undefined ? '' : html`<a href="${view.nextHref}" rel="next">Older memories</a>`}</span>
</nav>`,
  );
}

export interface MemoryView {
  readonly csrf: string;
  readonly memory: Memory;
  /** The space the memory is in, with the person's role there. */
  readonly space: AccessibleSpace;
  /** What the edit form shows: the stored values, or what was typed when it was refused. */
  readonly form: { readonly text: string; readonly tags: string; readonly importance: string; readonly reason: string };
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

export function memoryPage(view: MemoryView): string {
  const { memory } = view;
  const now = new Date();
  const { space } = view;
  const optional = (value: string | null) => (value === null ? html`<span class="muted">none</span>` : value);
  return layout(
    `Memory ${memory.id}`,
    { csrf: view.csrf, section: 'memories', notice: view.notice, error: view.error },
    html`<p><a href="${inSpace('/', space)}">Back to all memories${space.personal ? '' : html` in “${space.name}”`}</a></p>
<h1>Memory ${memory.id}</h1>
<section class="card" aria-labelledby="stored">
<h2 id="stored">As stored</h2>
<p class="memory-text">${memory.text}</p>
${tagLinks(memory.tags, space)}
<dl class="fields">
<dt>Space</dt><dd>${space.name}${space.personal ? '' : ` (you are ${space.role})`}</dd>
<dt>Importance</dt><dd>${memory.importance}</dd>
<dt>Captured</dt><dd>${optional(memory.captureMode === null ? null : memory.captureMode === 'explicit' ? 'explicitly (you asked)' : 'inferred (the assistant decided)')}</dd>
<dt>Source</dt><dd>${optional(memory.sourceProvider)}</dd>
<dt>Conversation</dt><dd>${optional(memory.sessionId)}</dd>
<dt>Stored</dt><dd>${when(memory.createdAt)}</dd>
<dt>Last confirmed</dt><dd>${when(memory.lastConfirmedAt)} ${staleness(memory, now)}</dd>
<dt>Expires</dt><dd>${memory.expiresAt === null ? html`<span class="muted">never</span>` : when(memory.expiresAt)}</dd>
</dl>
${canWrite(space) ? memoryForms(view) : html`<p class="muted small">You may read this space but not change it.</p></section>`}`,
  );
}

/** Still true, correct and forget: for a writer or owner of the memory's space. */
function memoryForms(view: MemoryView): Html {
  const { memory } = view;
  return html`<div class="actions">
<form method="post" action="/memories/${memory.id}/confirm">${csrfField(view.csrf)}<button type="submit" class="secondary">Still true</button></form>
</div>
</section>
<section class="card narrow" aria-labelledby="edit">
<h2 id="edit">Correct it</h2>
<p class="muted small">Saving stores the corrected fact as a new memory and keeps this one under “Corrected &amp; forgotten”, as an assistant's correct does.</p>
<form method="post" action="/memories/${memory.id}/correct">
${csrfField(view.csrf)}
<label for="text">Text</label>
<textarea id="text" name="text" required>${view.form.text}</textarea>
<label for="tags">Tags <span class="hint">separated by commas</span></label>
<input id="tags" name="tags" type="text" value="${view.form.tags}" autocapitalize="none" spellcheck="false">
<label for="importance">Importance <span class="hint">0 to 1</span></label>
<input id="importance" name="importance" type="number" min="0" max="1" step="0.05" value="${view.form.importance}">
<label for="reason">Why it changed <span class="hint">optional, kept with the old version</span></label>
<input id="reason" name="reason" type="text" maxlength="500" value="${view.form.reason}">
<div class="actions"><button type="submit">Save correction</button></div>
</form>
</section>
<section class="card narrow" aria-labelledby="forget">
<h2 id="forget">Forget it</h2>
<form method="post" action="/memories/${memory.id}/forget">
${csrfField(view.csrf)}
<label for="forget-reason">Why <span class="hint">optional</span></label>
<input id="forget-reason" name="reason" type="text" maxlength="500">
<div class="actions"><button type="submit" class="danger">Forget this memory</button></div>
</form>
</section>`;
}

export interface HistoryView {
  readonly csrf: string;
  readonly space: AccessibleSpace;
  readonly spaces: readonly AccessibleSpace[];
  readonly tombstones: readonly TombstoneRecord[];
  readonly nextHref: string | undefined;
  readonly firstPage: boolean;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

export function historyPage(view: HistoryView): string {
  const { space } = view;
  const writable = canWrite(space);
  return layout(
    'Corrected & forgotten',
    { csrf: view.csrf, section: 'history', notice: view.notice, error: view.error },
    html`${spaceBar(view.spaces, space, '/history')}
<h1>Corrected &amp; forgotten${space.personal ? '' : html` in “${space.name}”`}</h1>
<p class="muted">Memories that were corrected or forgotten are no longer recalled. Their old text is kept here, so an assistant can be warned when an outdated fact comes back. Erase what you do not want kept.</p>
${
  view.tombstones.length === 0
    ? html`<p class="card">${view.firstPage ? 'Nothing was corrected or forgotten.' : 'Nothing older.'}</p>`
    : html`${
        writable
          ? html`<form class="actions" method="post" action="/history/erase">${csrfField(view.csrf)}${spaceField(space)}
<label class="small"><input type="checkbox" name="confirm" value="yes" required> Erase all of them</label>
<button type="submit" class="danger">Erase all</button></form>`
          : ''
      }
<ol class="memories">${view.tombstones.map(
        (tombstone) => html`<li class="card" id="tombstone-${tombstone.memoryId}">
<p class="memory-text">${tombstone.text}</p>
${tagLinks(tombstone.tags, space)}
<p class="meta"><span>${
          tombstone.reason === 'corrected'
            ? html`Corrected ${when(tombstone.tombstonedAt)}${tombstone.replacedBy === undefined ? '' : html` (now <a href="/memories/${tombstone.replacedBy}">memory ${tombstone.replacedBy}</a>)`}`
            : html`Forgotten ${when(tombstone.tombstonedAt)}`
        }</span><span>Was memory ${tombstone.memoryId}, stored ${when(tombstone.memoryCreatedAt)}</span>${
          tombstone.note === undefined ? '' : html`<span>Why: ${tombstone.note}</span>`
        }</p>
${writable ? html`<form method="post" action="/history/${tombstone.memoryId}/erase">${csrfField(view.csrf)}${spaceField(space)}<button type="submit" class="secondary">Erase<span class="visually-hidden"> the record of memory ${tombstone.memoryId}</span></button></form>` : ''}
</li>`,
      )}</ol>`
}
<nav class="pager" aria-label="Pages">
<span>${view.firstPage ? '' : html`<a href="${inSpace('/history', space)}">Newest</a>`}</span>
<span>${view.nextHref === undefined ? '' : html`<a href="${view.nextHref}" rel="next">Older</a>`}</span>
</nav>`,
  );
}

export interface DataView {
  readonly csrf: string;
  readonly space: AccessibleSpace;
  readonly spaces: readonly AccessibleSpace[];
  readonly importMaxBytes: number;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
  /** What the person keeps and the most they may (0: no limit), shown when known. */
  readonly usage?: { readonly used: { readonly memories: number; readonly textBytes: number }; readonly quota: { readonly memories: number; readonly textBytes: number } } | undefined;
}

export function dataPage(view: DataView): string {
  const { space } = view;
  return layout(
    'Your data',
    { csrf: view.csrf, section: 'data', notice: view.notice, error: view.error },
    html`${spaceBar(view.spaces, space, '/data')}
<h1>Your data${space.personal ? '' : html` in “${space.name}”`}</h1>
${view.usage === undefined || !space.personal ? '' : usageLine(view.usage)}
<section class="card" aria-labelledby="export">
<h2 id="export">Export</h2>
<p>${space.personal ? 'Everything stored about you' : html`Everything in the space “${space.name}”`}, as one file: every memory with all its fields, and everything corrected or forgotten (JSON Lines, described in the service's README).</p>
<p><a class="button" href="${inSpace('/data/export', space)}" download>Download export</a></p>
</section>
${canWrite(space) ? importSection(view) : ''}
<section class="card" aria-labelledby="delete">
<h2 id="delete">Delete everything</h2>
<p>Deletes every memory and everything corrected or forgotten of your personal space and of the spaces you own, at once, ends your memberships of others' spaces, and signs you out everywhere. Export first if you may want them back.</p>
<p><a class="button secondary" href="/data/delete">Delete all my data…</a></p>
</section>`,
  );
}

function importSection(view: DataView): Html {
  return html`<section class="card" aria-labelledby="import">
<h2 id="import">Import</h2>
<p>A file exported from this service, or the <code>memory.jsonl</code> of the official MCP memory server (each observation becomes a memory tagged with its entity's name and type; each relation becomes a memory). What is already stored is skipped, so importing a file again adds nothing twice.</p>
<form method="post" action="/data/import" enctype="multipart/form-data">
${csrfField(view.csrf)}${spaceField(view.space)}
<label for="file">File <span class="hint">JSON Lines, at most ${formatBytes(view.importMaxBytes)}</span></label>
<input id="file" name="file" type="file" accept=".jsonl,.json,.txt,application/jsonl,application/json,text/plain" required>
<div class="actions"><button type="submit">Import</button></div>
</form>
</section>`;
}

export function importSummaryPage(csrf: string, summary: ImportSummary, space: AccessibleSpace): string {
  const stopped = summary.stoppedBy;
  return layout(
    'Import',
    { csrf, section: 'data', ...(stopped === undefined ? { notice: 'Import finished.' } : { error: `The import stopped: ${stopped.message}` }) },
    html`<h1>Import summary</h1>
<div class="card">
<table class="counts">
<tbody>
<tr><th scope="row">Memories imported</th><td>${summary.memoriesImported}</td></tr>
<tr><th scope="row">Corrected or forgotten records imported</th><td>${summary.tombstonesImported}</td></tr>
<tr><th scope="row">Skipped, already stored</th><td>${summary.duplicatesSkipped}</td></tr>
<tr><th scope="row">Refused</th><td>${summary.refused}</td></tr>
</tbody>
</table>
${stopped === undefined ? '' : html`<p>Everything counted above is stored. Import the same file again to continue: what is stored is skipped.</p>`}
</div>
${
  summary.refusals.length === 0
    ? ''
    : html`<h2>Refused</h2>
<div class="card"><ul class="plain">${summary.refusals.map((refusal) => html`<li><strong>${refusalPlace(refusal)}</strong>: ${refusal.reason}</li>`)}
${summary.refused > summary.refusals.length ? html`<li>… and ${summary.refused - summary.refusals.length} more</li>` : ''}</ul></div>`
}
<p><a href="${inSpace('/', space)}">See the memories${space.personal ? '' : html` in “${space.name}”`}</a> · <a href="${inSpace('/data', space)}">Back to your data</a></p>`,
  );
}

export function deletePage(view: { readonly csrf: string; readonly counts: { readonly memories: number; readonly tombstones: number }; readonly error?: string | undefined }): string {
  const { memories, tombstones } = view.counts;
  return layout(
    'Delete everything',
    { csrf: view.csrf, section: 'data', error: view.error },
    html`<h1>Delete all your data?</h1>
<div class="card narrow">
<p>This deletes, at once and for good:</p>
<ul>
<li>every memory stored about you (${memories} ${memories === 1 ? 'memory' : 'memories'}),</li>
<li>everything corrected or forgotten (${tombstones} ${tombstones === 1 ? 'record' : 'records'}),</li>
<li>your sign-ins to this page, on every device.</li>
</ul>
<p>Assistants connected to your account keep working and may store new memories. It cannot be undone: <a href="/data/export">download an export</a> first if you may want them back.</p>
<form method="post" action="/data/delete">
${csrfField(view.csrf)}
<label for="confirm">Type <strong>delete</strong> to confirm</label>
<input id="confirm" name="confirm" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" required>
<div class="actions"><button type="submit" class="danger">Delete everything</button> <a href="/data">Cancel</a></div>
</form>
</div>`,
  );
}

export function welcomePage(notice: string | undefined): string {
  return layout(
    'Sign in',
    { csrf: undefined, notice },
    html`<div class="card narrow">
<h1>Your memories</h1>
<p>What assistants connected to this service remember about you: read it, search it, correct or forget what is wrong, export it, or delete it all.</p>
<p><a class="button" href="/auth/sign-in">Sign in</a></p>
</div>`,
  );
}

/** A page with a heading, a sentence and a way on. */
export function messagePage(title: string, message: string, link: { readonly href: string; readonly label: string }, csrf?: string): string {
  return layout(title, { csrf }, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p><p><a href="${link.href}">${link.label}</a></p></div>`);
}

/** "You keep 120 memories (34 KiB of text) of at most 50,000 (50 MiB)." */
function usageLine({ used, quota }: NonNullable<DataView['usage']>): Html {
  const limits = [quota.memories > 0 ? `${quota.memories.toLocaleString('en')} memories` : '', quota.textBytes > 0 ? `${formatBytes(quota.textBytes)} of text` : ''].filter((part) => part !== '');
  return html`<p class="usage">You keep ${used.memories.toLocaleString('en')} ${used.memories === 1 ? 'memory' : 'memories'} (${formatBytes(used.textBytes)} of text)${limits.length === 0 ? '' : `; the most you may keep is ${limits.join(' and ')}`}.</p>`;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

export interface SpacesView {
  readonly csrf: string;
  readonly spaces: readonly AccessibleSpace[];
  /** The name typed into "Make a space" when it was refused. */
  readonly name?: string | undefined;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

/** The person's spaces with their role (personal first), and a form to make one. */
export function spacesPage(view: SpacesView): string {
  return layout(
    'Spaces',
    { csrf: view.csrf, section: 'spaces', notice: view.notice, error: view.error },
    html`<h1>Spaces</h1>
<p class="muted">A space keeps memories apart: your personal space is yours alone; a space you make can be shared with others, each as a <strong>reader</strong> (reads and searches) or a <strong>writer</strong> (also remembers, corrects and forgets).</p>
<ul class="plain spaces">${view.spaces.map(
      (space) => html`<li class="card" id="space-${space.personal ? 'personal' : space.id.slice('space:'.length)}">
<p><strong>${space.name}</strong> <span class="badge role">${space.personal ? 'personal' : space.role}</span></p>
<div class="actions"><a href="${inSpace('/', space)}">Memories</a>${space.personal ? '' : html` <a href="/spaces/${space.id}">${space.role === 'owner' ? 'Members and settings' : 'Members'}</a>`}</div>
</li>`,
    )}</ul>
<section class="card narrow" aria-labelledby="new-space">
<h2 id="new-space">Make a space</h2>
<form method="post" action="/spaces">
${csrfField(view.csrf)}
<label for="name">Name <span class="hint">for example Family or Work; at most 80 characters</span></label>
<input id="name" name="name" type="text" maxlength="80" required value="${view.name ?? ''}">
<div class="actions"><button type="submit">Make space</button></div>
</form>
</section>`,
  );
}

export interface SpaceView {
  readonly csrf: string;
  readonly space: SpaceDetails;
  /** Whether a group of an external authorization server can be linked (OAuthMembershipClaim is set). */
  readonly groupClaim: string | undefined;
  /** How the share form asks for a person: a user name (built-in server) or a subject (external). */
  readonly personLabel: string;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

const roleSelect = (id: string, selected: string): Html =>
  html`<select id="${id}" name="role">${(['reader', 'writer'] as const).map((role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${role}</option>`)}</select>`;

/** One shared space: its members; for the owner, every change; for a member, leaving. */
export function spacePage(view: SpaceView): string {
  const { space, csrf } = view;
  const owner = space.role === 'owner';
  const action = (what: string) => `/spaces/${space.id}/${what}`;
  const shown = (member: SpaceDetails['members'][number]) => member.name ?? member.subject;
  return layout(
    space.name,
    { csrf, section: 'spaces', notice: view.notice, error: view.error },
    html`<p><a href="/spaces">All spaces</a> · <a href="${inSpace('/', space)}">Memories in “${space.name}”</a></p>
<h1>${space.name}</h1>
<p>You are <strong>${ROLE_LABELS[space.role]}</strong> here. <span class="small muted">Id for assistants: <code>${space.id}</code></span></p>
<section class="card" aria-labelledby="members">
<h2 id="members">Members</h2>
<ul class="plain members">${space.members.map((member, index) => {
      const label = html`<span class="visually-hidden"> ${shown(member)}</span>`;
      return html`<li id="member-${index}"><strong class="member-name">${shown(member)}</strong> <span class="badge role">${member.role}</span>${
        owner && member.role !== 'owner'
          ? html`<div class="actions">
<form method="post" action="${action('members/role')}">${csrfField(csrf)}<input type="hidden" name="member" value="${member.subject}"><input type="hidden" name="role" value="${member.role === 'reader' ? 'writer' : 'reader'}"><button type="submit" class="secondary">Make ${member.role === 'reader' ? 'writer' : 'reader'}${label}</button></form>
<form method="post" action="${action('transfer')}">${csrfField(csrf)}<input type="hidden" name="member" value="${member.subject}"><button type="submit" class="secondary">Hand the space on${label}</button></form>
<form method="post" action="${action('members/remove')}">${csrfField(csrf)}<input type="hidden" name="member" value="${member.subject}"><button type="submit" class="danger quiet">Remove${label}</button></form>
</div>`
          : ''
      }</li>`;
    })}</ul>
${space.externalGroup === undefined ? '' : html`<p class="small">Also everyone in the group <strong>${space.externalGroup.name}</strong>, as ${space.externalGroup.role}.</p>`}
</section>
${owner ? ownerForms(view, action) : html`<section class="card narrow" aria-labelledby="leave">
<h2 id="leave">Leave</h2>
<p>You will no longer see or change this space's memories, unless its owner shares it with you again.</p>
<form method="post" action="${action('leave')}">${csrfField(csrf)}<button type="submit" class="danger">Leave “${space.name}”</button></form>
</section>`}`,
  );
}

function ownerForms(view: SpaceView, action: (what: string) => string): Html {
  const { space, csrf } = view;
  return html`<section class="card narrow" aria-labelledby="share">
<h2 id="share">Share</h2>
<form method="post" action="${action('share')}">
${csrfField(csrf)}
<label for="person">${view.personLabel}</label>
<input id="person" name="person" type="text" required autocapitalize="none" spellcheck="false">
<label for="share-role">Role <span class="hint">a reader reads and searches; a writer also remembers, corrects and forgets</span></label>
${roleSelect('share-role', 'reader')}
<div class="actions"><button type="submit">Share</button></div>
</form>
</section>
${
  view.groupClaim === undefined
    ? ''
    : html`<section class="card narrow" aria-labelledby="group">
<h2 id="group">Group</h2>
<p class="small muted">Everyone whose token carries this value in its <code>${view.groupClaim}</code> claim is a member, with this role.</p>
<form method="post" action="${action('group')}">
${csrfField(csrf)}
<label for="group-name">Group <span class="hint">leave empty to unlink</span></label>
<input id="group-name" name="group" type="text" maxlength="200" value="${space.externalGroup?.name ?? ''}" autocapitalize="none" spellcheck="false">
<label for="group-role">Role</label>
${roleSelect('group-role', space.externalGroup?.role ?? 'reader')}
<div class="actions"><button type="submit">Save group</button></div>
</form>
</section>`
}
<section class="card narrow" aria-labelledby="rename">
<h2 id="rename">Rename</h2>
<form method="post" action="${action('rename')}">
${csrfField(csrf)}
<label for="new-name">New name</label>
<input id="new-name" name="name" type="text" maxlength="80" required value="${space.name}">
<div class="actions"><button type="submit">Rename</button></div>
</form>
</section>
<section class="card narrow" aria-labelledby="delete-space">
<h2 id="delete-space">Delete</h2>
<p>Deletes the space with every memory and everything corrected or forgotten in it, for every member.</p>
<p><a class="button secondary" href="${action('delete')}">Delete this space…</a></p>
</section>`;
}

/** The confirmation before a space is deleted: its name must be typed. */
export function spaceDeletePage(view: { readonly csrf: string; readonly space: AccessibleSpace; readonly counts: { readonly memories: number; readonly tombstones: number }; readonly error?: string | undefined }): string {
  const { space, counts } = view;
  return layout(
    'Delete space',
    { csrf: view.csrf, section: 'spaces', error: view.error },
    html`<h1>Delete “${space.name}”?</h1>
<div class="card narrow">
<p>This deletes, at once and for good, for every member:</p>
<ul>
<li>every memory in the space (${counts.memories} ${counts.memories === 1 ? 'memory' : 'memories'}),</li>
<li>everything corrected or forgotten in it (${counts.tombstones} ${counts.tombstones === 1 ? 'record' : 'records'}),</li>
<li>the space itself and its members.</li>
</ul>
<p>It cannot be undone: <a href="${inSpace('/data/export', space)}">download an export</a> first if you may want them back.</p>
<form method="post" action="/spaces/${space.id}/delete">
${csrfField(view.csrf)}
<label for="confirm">Type the space's name, <strong>${space.name}</strong>, to confirm</label>
<input id="confirm" name="confirm" type="text" autocomplete="off" spellcheck="false" required>
<div class="actions"><button type="submit" class="danger">Delete the space</button> <a href="/spaces/${space.id}">Cancel</a></div>
</form>
</div>`,
  );
}
