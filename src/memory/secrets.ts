/**
 * Secret detection for text submitted to be remembered.
 *
 * `looksLikeSecret(text)` answers one question — "would storing this text store a credential?" —
 * and deliberately never returns, logs or throws the matched text. The caller turns `true` into
 * SECRET_REJECTED.
 *
 * Three independent detectors; the text is rejected if any of them fires:
 *
 * 1. Well-known credential formats (KNOWN_FORMATS below): provider keys with a distinctive prefix
 *    and length (OpenAI / Anthropic `sk-…`, AWS `AKIA…`/`ASIA…`, GitHub `ghp_…`/`github_pat_…`,
 *    GitLab `glpat-…`, Slack `xox?-…` and webhook URLs, Stripe `sk_live_…`/`rk_live_…`, Google
 *    `AIza…`, Twilio `SK…`, SendGrid `SG.….…`, npm `npm_…`, Hugging Face `hf_…`, DigitalOcean
 *    `dop_v1_…`, Shopify `shpat_…`, and a few more), JWTs (`eyJ….….…`), PEM / PGP / PuTTY private
 *    key markers, `Authorization: Basic …` headers and URLs with an embedded password
 *    (`scheme://user:password@host`, unless the password is a placeholder such as `***`,
 *    `<password>`, `${DB_PASS}` or the word "password"). Stripe *publishable* keys (`pk_live_…`)
 *    are public by design and are not rejected.
 *
 * 2. AWS secret access keys: a 40-character run of `[A-Za-z0-9/+]` that mixes at least three
 *    character classes, with "aws" or "secret" in the 80 characters before it. (A git commit hash
 *    is 40 characters of lowercase hex — only two classes — so it never matches.)
 *
 * 3. Keyword + value. A keyword (key, token, secret, password, passwd, passphrase, passcode, pwd,
 *    pw, credential(s), creds, bearer, auth, authorization, authentication — also as part of an
 *    identifier such as `api_key`, `apiKey`, `APIKEY`, `DB_PASSWORD`, `client-secret`, but not
 *    inside an ordinary word such as "monkey" or "keyboard") followed by an assignment-like
 *    separator (`:`, `=`, `:=`, `=>`, `->`, " is ", " was ", " are ", or plain whitespace,
 *    optionally after a closing quote as in JSON `"access_token": "…"`; or "for|of|to|on|at|in
 *    <up to three words>" and then `:`/`=`/is, as in "the password for the wifi is …") and then
 *    a value (the next run of non-space characters, optionally quoted, at most 256 characters,
 *    trailing `.,:;!?` dropped). The value is then judged:
 *      - Any keyword — the value is *random-looking*: at least 20 characters; mixes at least two
 *        of lowercase / uppercase / digits; is not an identifier, i.e. not made only of
 *        word-like segments (`my-project-name-2024`, `user:1234:profile`, `v2.3.1`); Shannon
 *        entropy at least 3.0 bits per character; and is not a URL, e-mail address or file path.
 *        So `api_key=<40 hex>`, `token: <40 hex>`, `Bearer <26 mixed chars>` are rejected while a
 *        bare commit hash (no keyword) or "commit <hash>" is accepted.
 *      - Password-like keywords only (password, passwd, passphrase, passcode, pwd, pw,
 *        credential(s), creds) — additionally the value is rejected if it *looks like a password*:
 *        6 to 128 characters, not a URL / e-mail / path, and either contains a digit and a letter,
 *        or contains a symbol (anything but letters, digits, hyphen and apostrophe) next to
 *        letters or digits, or is all digits (a PIN-like number of 6+ digits). Ordinary words
 *        ("again", "expired", "stored", "e-mail") are not passwords, so "I forgot my password
 *        again" or "passwords are stored hashed" are accepted, while "my password is hunter2" or
 *        "password: Tr0ub4dor&3" are rejected.
 *
 * Everything is linear in the length of the text: every regular expression either starts with a
 * literal prefix and consumes a single character class, or has bounded repetition, so there is
 * no catastrophic backtracking on adversarial input (texts are up to 16000 characters).
 */

type Detector = {
  readonly re: RegExp;
  /** Optional second look at the match (never exposed outside this module). */
  readonly check?: (match: string) => boolean;
};

/** Body of `sk-…` keys: skip an optional `proj-` / `ant-api03-` / … prefix, then require randomness. */
const checkSkKey = (match: string): boolean => looksRandom(match.replace(/^sk-(?:(?:proj|svcacct|admin|ant)-)?(?:(?:api|admin)\d{2}-)?/, ''));

const PLACEHOLDER_PASSWORD = /^(?:\*+|x+|\.+|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[A-Za-z_]+%|password|passwd|pass|pwd|secret)$/i;

const KNOWN_FORMATS: readonly Detector[] = [
  // OpenAI (legacy, project, service-account, admin) and Anthropic keys.
  { re: /\bsk-[A-Za-z0-9_-]{20,}/g, check: checkSkKey },
  // AWS access key ids (long-term AKIA, temporary ASIA, and the other documented prefixes).
  { re: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g },
  // GitHub personal/OAuth/user-to-server/server-to-server/refresh tokens and fine-grained PATs.
  { re: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g },
  { re: /\bgithub_pat_[A-Za-z0-9_]{40,}\b/g },
  // GitLab tokens (personal, deploy, runner, pipeline-trigger, CI-build, feed, OAuth, …).
  { re: /\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|soat|oas)-[A-Za-z0-9_-]{20,}/g },
  // Slack bot/user/app/refresh/config tokens and incoming-webhook / workflow URLs.
  { re: /\bxox[abeoprs]-[A-Za-z0-9-]{10,}/g },
  { re: /\bxapp-\d+-[A-Za-z0-9-]{10,}/g },
  { re: /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_]{6,}\/[A-Za-z0-9_/-]{6,}/g },
  // Discord webhooks.
  { re: /\bdiscord(?:app)?\.com\/api\/webhooks\/\d{5,}\/[A-Za-z0-9_-]{20,}/g },
  // Stripe secret / restricted keys and webhook signing secrets (publishable pk_ keys are public).
  { re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { re: /\bwhsec_[A-Za-z0-9+/=]{24,}/g },
  // Google API keys, OAuth client secrets and OAuth access tokens.
  { re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { re: /\bGOCSPX-[A-Za-z0-9_-]{24,}/g },
  { re: /\bya29\.[0-9A-Za-z_-]{20,}/g },
  // Twilio API key SIDs.
  { re: /\bSK[0-9a-fA-F]{32}\b/g },
  // SendGrid.
  { re: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}/g },
  // npm, PyPI, Hugging Face, Replicate, Groq, xAI, Perplexity, Linear, Notion, Supabase.
  { re: /\bnpm_[A-Za-z0-9]{36,}\b/g },
  { re: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g },
  { re: /\bhf_[A-Za-z0-9]{30,}\b/g },
  { re: /\br8_[A-Za-z0-9]{30,}\b/g },
  { re: /\bgsk_[A-Za-z0-9]{40,}\b/g },
  { re: /\bxai-[A-Za-z0-9]{60,}\b/g },
  { re: /\bpplx-[A-Za-z0-9]{40,}\b/g },
  { re: /\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b/g },
  { re: /\b(?:secret|ntn)_[A-Za-z0-9]{40,}\b/g },
  { re: /\bsbp_[a-f0-9]{40}\b/g },
  // DigitalOcean personal access / OAuth / refresh tokens.
  { re: /\bdo[por]_v1_[a-f0-9]{64}\b/g },
  // Shopify access tokens and shared secrets.
  { re: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  // Mailgun, Mailchimp, Databricks, Postman, HashiCorp Vault, Doppler, Square, New Relic,
  // Grafana, Sentry, Atlassian, Telegram bots, age.
  { re: /\bkey-[0-9a-zA-Z]{32}\b/g },
  { re: /\b[0-9a-f]{32}-us\d{1,2}\b/g },
  { re: /\bdapi[a-f0-9]{32}(?:-\d+)?\b/g },
  { re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { re: /\bhv[sbr]\.[A-Za-z0-9_-]{24,}/g },
  { re: /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b/g },
  { re: /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}/g },
  { re: /\bNRAK-[A-Z0-9]{27}\b/g },
  { re: /\bgl(?:c|sa)_[A-Za-z0-9_=+/-]{32,}/g },
  { re: /\bsntry[su]_[A-Za-z0-9_=+/-]{30,}/g },
  { re: /\bATATT3[A-Za-z0-9_=-]{50,}/g },
  { re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g },
  { re: /\bAGE-SECRET-KEY-1[0-9A-Z]{50,}/g },
  // JSON Web Tokens (and JWE): base64url JSON header `{"…` = `eyJ…`, then two or more segments.
  { re: /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g },
  // PEM / OpenSSH / PGP private keys; PuTTY key files.
  { re: /\bBEGIN(?: [A-Z0-9]+){0,4} PRIVATE KEY(?: BLOCK)?\b/g },
  { re: /\bPuTTY-User-Key-File-\d+:/g },
  // HTTP Basic credentials.
  {
    re: /\bauthorization\s{0,8}:\s{0,8}basic\s{1,8}[A-Za-z0-9+/]{8,}={0,2}/gi,
    check: (m) => {
      const value = m.slice(m.search(/\S+$/));
      return /[a-z]/.test(value) && /[A-Z0-9]/.test(value);
    },
  },
  // URLs with an embedded password: scheme://user:password@host (placeholders excepted).
  {
    re: /:\/\/[^\s/:@]*:[^\s/@]+@/g,
    check: (m) => !PLACEHOLDER_PASSWORD.test(m.slice(m.indexOf(':', 3) + 1, -1)),
  },
];

/** 40-character base64-ish run; checked for class mix and aws/secret wording before it. */
const AWS_SECRET_CANDIDATE = /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const AWS_SECRET_CONTEXT = /aws|secret/i;

/**
 * Keywords whose following value is judged. Boundaries are checked in code (see keywordAt) so
 * that `apiKey`, `API_KEY` and `APIKEY` count but "monkey", "keyboard" and "tokenizer" do not.
 */
const KEYWORD = /pass(?:words?|wd|phrase|code)|pwd|pw|credentials?|creds|keys?|tokens?|secrets?|bearer|auth(?:orization|entication)?/gi;
const PASSWORD_KEYWORD = /^(?:pass(?:words?|wd|phrase|code)|pwd|pw|credentials?|creds)$/i;
/** Letters that may directly precede a keyword in a run-together identifier (`apikey`, `authtoken`). */
const KEYWORD_PREFIXES = ['api', 'access', 'secret', 'private', 'client', 'app', 'auth', 'oauth', 'refresh', 'session', 'bot', 'master', 'admin', 'account', 'db', 'user', 'root', 'service'];

/**
 * What may follow a keyword before its value. Written so that no two adjacent quantifiers can
 * match the same characters (keeps matching linear even on long runs of whitespace).
 */
const STRONG_SEPARATOR = String.raw`(?:\s*(?::=|=>|->|[:=])\s*|\s+(?:is|was|are)(?:\s*:)?\s+)`;
const VALUE_AFTER_KEYWORD = new RegExp(
  String.raw`["'\x60]?(?:\s+(?:for|of|to|on|at|in)(?:\s+[^\s:=]{1,40}){1,3}?${STRONG_SEPARATOR}|${STRONG_SEPARATOR}|\s+)["'\x60]?([^\s"'\x60<>()[\]{},;]{1,256})`,
  'y',
);

const LETTER = /\p{L}/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const EMAIL_LIKE = /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i;
const PATH_LIKE = /^(?:~?\/|\.{1,2}\/|[A-Za-z]:\\)/;

/** A segment that reads like a word, number or version: `project`, `Alpha`, `README`, `v2`, `utf8`, `2024`. */
const WORDLIKE_SEGMENT = /^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+|[A-Za-z]+\d{1,4}|\d+)$/;

export function looksLikeSecret(text: string): boolean {
  for (const { re, check } of KNOWN_FORMATS) {
    re.lastIndex = 0;
    if (!check) {
      if (re.test(text)) return true;
      continue;
    }
    for (const m of text.matchAll(re)) {
      if (check(m[0])) return true;
    }
  }
  if (hasAwsSecretKey(text)) return true;
  return hasKeywordWithSecretValue(text);
}

function hasAwsSecretKey(text: string): boolean {
  for (const m of text.matchAll(AWS_SECRET_CANDIDATE)) {
    const value = m[0];
    let classes = 0;
    if (/[a-z]/.test(value)) classes++;
    if (/[A-Z]/.test(value)) classes++;
    if (/[0-9]/.test(value)) classes++;
    if (/[/+]/.test(value)) classes++;
    if (classes < 3) continue;
    const before = text.slice(Math.max(0, m.index - 80), m.index);
    if (AWS_SECRET_CONTEXT.test(before)) return true;
  }
  return false;
}

function hasKeywordWithSecretValue(text: string): boolean {
  for (const m of text.matchAll(KEYWORD)) {
    const start = m.index;
    const keyword = m[0];
    const end = start + keyword.length;
    if (!isKeywordBoundary(text, start, end)) continue;
    VALUE_AFTER_KEYWORD.lastIndex = end;
    const value = VALUE_AFTER_KEYWORD.exec(text);
    if (!value) continue;
    const candidate = (value[1] ?? '').replace(/[.,:;!?]+$/, '');
    if (candidate === '' || URL_LIKE.test(candidate) || EMAIL_LIKE.test(candidate) || PATH_LIKE.test(candidate)) continue;
    if (looksRandom(candidate)) return true;
    if (PASSWORD_KEYWORD.test(keyword) && looksLikePassword(candidate)) return true;
  }
  return false;
}

function isKeywordBoundary(text: string, start: number, end: number): boolean {
  const next = text[end];
  if (next !== undefined && LETTER.test(next)) return false;
  const prev = text[start - 1];
  if (prev === undefined || !LETTER.test(prev)) return true;
  // camelCase: `apiKey`, `authToken`, `AccountKey`.
  if (UPPER.test(text[start] ?? '') && LOWER.test(prev)) return true;
  // Run-together identifiers: `apikey`, `APIKEY`, `accesstoken`.
  let i = start;
  while (i > 0 && start - i < 16 && LETTER.test(text[i - 1] ?? '')) i--;
  const run = text.slice(i, start).toLowerCase();
  return KEYWORD_PREFIXES.some((prefix) => run.endsWith(prefix));
}

/** Shannon entropy in bits per character. */
function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const length = [...value].length;
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

/** Made only of word-like segments separated by punctuation: an identifier, slug, key path or version. */
function isIdentifierLike(value: string): boolean {
  return value.split(/[-_./+=~:|@#]+/).every((segment) => segment === '' || WORDLIKE_SEGMENT.test(segment));
}

/** A machine-generated-looking token: long, mixed character classes, not an identifier, high entropy. */
function looksRandom(value: string): boolean {
  if (value.length < 20) return false;
  let classes = 0;
  if (/[a-z]/.test(value)) classes++;
  if (/[A-Z]/.test(value)) classes++;
  if (/[0-9]/.test(value)) classes++;
  if (classes < 2) return false;
  if (isIdentifierLike(value)) return false;
  return shannonEntropy(value) >= 3.0;
}

/** Something a person would choose as a password: see the module comment. */
function looksLikePassword(value: string): boolean {
  const length = [...value].length;
  if (length < 6 || length > 128) return false;
  const hasDigit = /[0-9]/.test(value);
  const hasLetter = /\p{L}/u.test(value);
  const hasSymbol = /[^\p{L}\p{N}'\u2019-]/u.test(value);
  if (hasDigit && hasLetter) return true;
  if (hasSymbol && (hasLetter || hasDigit)) return true;
  return /^[0-9]+$/.test(value);
}
