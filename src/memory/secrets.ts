import { secretRejected } from '../errors.js';

/**
 * Secret detection for everything a write would store.
 *
 * `looksLikeSecret(text)` answers one question, "would storing this text store a credential?", and never
 * returns, logs or throws the matched text. `rejectSecrets(fields)` applies it to every stored string field of
 * a write and throws SECRET_REJECTED naming the field (never its value).
 *
 * The text is first put in NFKC form with format characters removed, so full-width keys ("ｓｋ－ｐｒｏｊ－…")
 * and keys with zero-width characters inside read as the plain key. Then any of these detectors rejects it:
 *
 * 1. Well-known credential formats (KNOWN_FORMATS): provider keys with a distinctive prefix and length (OpenAI
 *    and Anthropic `sk-…`, AWS `AKIA…`/`ASIA…`, GitHub, GitLab, Slack, Stripe, Google, Twilio, SendGrid, npm,
 *    Hugging Face and more), also glued to the word before them (`GITHUB_TOKEN_ghp_…`); JWTs; PEM, PGP and
 *    PuTTY private-key markers (BEGIN or END); `Authorization: Basic …`. Stripe publishable keys are public.
 * 2. Bare private-key bodies: the base64 of a DER private key starts with fixed bytes (PKCS#1 RSA/DSA, PKCS#8
 *    plain and encrypted, SEC1 EC, Ed25519, OpenSSH), so a body pasted without its BEGIN line is still known.
 * 3. AWS secret access keys: a run of exactly 40 `[A-Za-z0-9/+]` mixing three character classes, after "aws" or
 *    "secret" wording; or, with no such wording, one that is high-entropy (at least 4 bits per character), mixes
 *    upper and lower case with a digit or `/+`, is not made of camelCase words, and is not part of a URL. A git
 *    commit hash (lowercase hex, two classes) never matches.
 * 4. Credentials in URLs: `scheme://user:password@host` (the password may contain `/`; a port followed by a path
 *    is not a password; placeholders such as `***`, `<password>`, `${DB_PASS}` or the word "password" pass),
 *    Oracle's `user/password@`, and password-, token-, key- or signature-named parameters after `?`, `&` or `;`
 *    (`?password=…`, `&pwd=…`, `;password=…;`, `?api_key=…`, `X-Amz-Signature=…`).
 * 5. PINs and access codes: "PIN", "pin code", "passcode", or a door/gate/garage/alarm/safe/lock/entry/access/
 *    security code, followed by 4 to 8 digits ("my PIN is 4821", "SIM PIN: 0000", "the garage code is 1397").
 *    Lowercase "pin" needs "is"/":"/"=" or "code"/"number" ("pin 12 on the Arduino" passes).
 * 6. Keyword + value. A keyword (key, token, secret, password, passwd, passphrase, passcode, pwd, pw,
 *    credential(s), creds, bearer, auth, authorization, authentication; also inside identifiers such as
 *    `api_key`, `apiKey`, `DB_PASSWORD`; not inside words such as "monkey"), or a password word of another
 *    language (Passwort, Kennwort, mot de passe, contraseña, senha, wachtwoord, hasło, пароль, パスワード, 密码,
 *    비밀번호, lösenord and others), then a separator (`:`, `=`, `:=`, `=>`, `->`, " - ", is/was/are and their
 *    equivalents in those languages, or plain whitespace; or "for|of|to|on|at|in <up to three words>" and then a
 *    separator), then a value (the next run of non-space characters, optionally quoted, trailing `.,:;!?`
 *    dropped). The value is judged:
 *      - after any keyword: *random-looking*, i.e. at least 20 characters, two of lowercase/uppercase/digits,
 *        not an identifier (`my-project-name-2024`, `user:1234:profile`), Shannon entropy at least 3 bits per
 *        character, and not a URL or e-mail address (a path-looking value counts: `key: /9j4+…` is base64);
 *      - after a password word, also *password-like*: 6 to 128 characters mixing letters and digits, or a
 *        symbol next to letters or digits, or all digits (6+, or 4+ after a separator such as "is" or ":");
 *      - after an English password word and a separator other than whitespace, also a word of letters only
 *        (4 to 64): mixed case inside it ("BlueElephant", "XkpQmZwLrT"), a capitalised or quoted word, or an
 *        assignment (`pwd=Summer`, `PASSWORD=letmein`); a lowercase word after "is" only when it ends the
 *        clause ("the wifi password is sunshine."). Words that describe rather than reveal a password ("the
 *        password is stored / too short / required / different / none / whatever …") never count, nor words
 *        ending like adjectives or participles (-ed, -ing, -able, …). In other languages only mixed case inside
 *        the word counts (a capitalised German noun is not a password: "Das Passwort ist Pflicht").
 *
 * 7. A credential-named identifier (`SECRET_KEY_BASE`, `private_key_id`, `auth_token`; not `public_key_*`,
 *    `*_hash`, `*_uri`) assigned a random-looking value, hex included.
 * 8. A passphrase written out: three or more words after "passphrase", "seed phrase" or "recovery phrase" with no
 *    function word among them, or a 12-to-24-word mnemonic.
 * 9. A text that is only a base64 blob of 32 or more random bytes (a key with nothing around it).
 * 10. Base64 (standard or URL-safe, wrapped over lines or not) that decodes to text is read again through all of
 *    the above, two levels deep and at most 64 KiB decoded per text: a key, a credentials file or an .env in
 *    base64 is still refused.
 *
 * Everything is linear in the length of the text: each regular expression starts with a literal or a single
 * character class and has bounded or non-overlapping repetition (texts are up to 16000 characters).
 * `test/fixtures/secrets-corpus.ts` is the labelled corpus both sides are measured on.
 */

type Detector = {
  readonly re: RegExp;
  /** Optional second look at the match (never exposed outside this module). */
  readonly check?: (match: string) => boolean;
};

/** Body of `sk-…` keys: skip an optional `proj-` / `ant-api03-` / … prefix, then require randomness. */
const checkSkKey = (match: string): boolean => looksRandom(match.replace(/^sk-(?:(?:proj|svcacct|admin|ant)-)?(?:(?:api|admin)\d{2}-)?/, ''));

/** Values that stand for a credential in documentation rather than being one. */
const PLACEHOLDER = /^(?:\*+|x+|\.+|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[A-Za-z_]+%|password|passwd|pass|pwd|secret|changeit)$/i;

const KNOWN_FORMATS: readonly Detector[] = [
  // OpenAI (legacy, project, service-account, admin) and Anthropic keys.
  { re: /sk-[A-Za-z0-9_-]{20,}/g, check: checkSkKey },
  // AWS access key ids (long-term AKIA, temporary ASIA, and the other documented prefixes).
  { re: /(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g },
  // GitHub personal/OAuth/user-to-server/server-to-server/refresh tokens and fine-grained PATs.
  { re: /gh[pousr]_[A-Za-z0-9]{36,}\b/g },
  { re: /github_pat_[A-Za-z0-9_]{40,}\b/g },
  // GitLab tokens (personal, deploy, runner, pipeline-trigger, CI-build, feed, OAuth, …).
  { re: /gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|soat|oas)-[A-Za-z0-9_-]{20,}/g },
  // Slack bot/user/app/refresh/config tokens and incoming-webhook / workflow URLs.
  { re: /xox[abeoprs]-[A-Za-z0-9-]{10,}/g },
  { re: /xapp-\d+-[A-Za-z0-9-]{10,}/g },
  { re: /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_]{6,}\/[A-Za-z0-9_/-]{6,}/g },
  // Discord webhooks.
  { re: /\bdiscord(?:app)?\.com\/api\/webhooks\/\d{5,}\/[A-Za-z0-9_-]{20,}/g },
  // Stripe secret / restricted keys and webhook signing secrets (publishable pk_ keys are public).
  { re: /(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { re: /whsec_[A-Za-z0-9+/=]{24,}/g },
  // Google API keys, OAuth client secrets and OAuth access tokens.
  { re: /AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { re: /GOCSPX-[A-Za-z0-9_-]{24,}/g },
  { re: /ya29\.[0-9A-Za-z_-]{20,}/g },
  // Twilio API key SIDs.
  { re: /\bSK[0-9a-fA-F]{32}\b/g },
  // SendGrid.
  { re: /SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}/g },
  // npm, PyPI, Hugging Face, Replicate, Groq, xAI, Perplexity, Linear, Notion, Supabase.
  { re: /npm_[A-Za-z0-9]{36,}\b/g },
  { re: /pypi-AgE[A-Za-z0-9_-]{50,}/g },
  { re: /hf_[A-Za-z0-9]{30,}\b/g },
  { re: /r8_[A-Za-z0-9]{30,}\b/g },
  { re: /gsk_[A-Za-z0-9]{40,}\b/g },
  { re: /xai-[A-Za-z0-9]{60,}\b/g },
  { re: /pplx-[A-Za-z0-9]{40,}\b/g },
  { re: /lin_(?:api|oauth)_[A-Za-z0-9]{32,}\b/g },
  { re: /(?:secret|ntn)_[A-Za-z0-9]{40,}\b/g },
  { re: /sbp_[a-f0-9]{40}\b/g },
  // DigitalOcean personal access / OAuth / refresh tokens.
  { re: /do[por]_v1_[a-f0-9]{64}\b/g },
  // Shopify access tokens and shared secrets.
  { re: /shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  // Mailgun, Mailchimp, Databricks, Postman, HashiCorp Vault, Doppler, Square, New Relic,
  // Grafana, Sentry, Atlassian, Telegram bots, age.
  { re: /\bkey-[0-9a-zA-Z]{32}\b/g },
  { re: /\b[0-9a-f]{32}-us\d{1,2}\b/g },
  { re: /\bdapi[a-f0-9]{32}(?:-\d+)?\b/g },
  { re: /PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { re: /hv[sbr]\.[A-Za-z0-9_-]{24,}/g },
  { re: /dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b/g },
  { re: /sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}/g },
  { re: /NRAK-[A-Z0-9]{27}\b/g },
  { re: /gl(?:c|sa)_[A-Za-z0-9_=+/-]{32,}/g },
  { re: /sntry[su]_[A-Za-z0-9_=+/-]{30,}/g },
  { re: /ATATT3[A-Za-z0-9_=-]{50,}/g },
  { re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g },
  { re: /AGE-SECRET-KEY-1[0-9A-Z]{50,}/g },
  // Alibaba Cloud AccessKey ids (the body random: "LTAIconference2024" is a word and a year).
  { re: /\bLTAI[A-Za-z0-9]{12,28}\b/g, check: (match) => looksRandom(match.slice(4)) },
  // Terraform Cloud / Enterprise API tokens.
  { re: /\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}/g },
  // JSON Web Tokens (and JWE): base64url JSON header `{"…` = `eyJ…`, then two or more segments.
  { re: /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g },
  // PEM / OpenSSH / PGP private keys; PuTTY key files.
  { re: /\b(?:BEGIN|END)(?: [A-Z0-9]+){0,4} PRIVATE KEY(?: BLOCK)?\b/g },
  { re: /\bPuTTY-User-Key-File-\d+:/g },
  // HTTP Basic credentials.
  {
    re: /\bauthorization\s{0,8}:\s{0,8}basic\s{1,8}[A-Za-z0-9+/]{8,}={0,2}/gi,
    check: (m) => {
      const value = m.slice(m.search(/\S+$/));
      return /[a-z]/.test(value) && /[A-Z0-9]/.test(value);
    },
  },
];

/** Bare DER private keys, base64: the fixed bytes at their start, then more key material. */
const PRIVATE_KEY_BODY = new RegExp(
  [
    // PKCS#1 RSA / DSA and PKCS#8 (SEQUENCE, INTEGER 0, then INTEGER modulus or AlgorithmIdentifier).
    String.raw`MII[A-Za-z0-9+/]{3}IBA(?:AK[BC]|DAN)`,
    // PKCS#8 EC keys (ecPublicKey algorithm).
    String.raw`AgEAMB[AM]GByqGSM49AgEG`,
    // SEC1 EC private keys (P-256, P-384, P-521).
    String.raw`M[HI][A-Za-z0-9+/]{1,2}(?:CAQEEI|AgEBBD[AB]|AgEBBEI)`,
    // PKCS#8 Ed25519 / X25519.
    String.raw`MC4CAQAwBQYDK2V[wu]BCIEI`,
    // Encrypted PKCS#8 (PBES2).
    String.raw`BgkqhkiG9w0BBQ0w`,
    // OpenSSH ("openssh-key-v1\0").
    String.raw`b3BlbnNzaC1rZXktdjE`,
  ]
    .map((prefix) => `(?:${prefix})[A-Za-z0-9+/=\\s]{16}`)
    .join('|'),
);

/** 40-character base64-ish run; checked for class mix, wording before it, or randomness. */
const AWS_SECRET_CANDIDATE = /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const AWS_SECRET_CONTEXT = /aws|secret/i;
/** Runs that read as words in camelCase (`This`, `Very`, `name`); a random key is mostly not made of them. */
const CAMEL_WORD = /[A-Z]?[a-z]{2,}/g;

/** `scheme://user:password@` (user may be empty). The password may hold `/` and `@`: up to the last `@`. */
const URL_USERINFO = /:\/\/[^\s/:@]*:(\S{1,256})@/g;
/** Oracle's `jdbc:oracle:thin:user/password@…`. */
const ORACLE_USER_PASSWORD = /jdbc:oracle:[a-z]+:[^\s/:@]+\/([^\s@]{1,256})@/gi;
/** A credential-named URL or connection-string parameter and its value. */
const URL_PARAMETER =
  /[?&;](?:[A-Za-z0-9_-]*[_-]|ssl|api|access|auth|client|private|session|refresh)?(passwords?|passwd|pwd|pass|secret|token|key|signature|sig|auth|credential)=([^&#;\s"'<>]{1,512})/gi;
const PASSWORD_PARAMETER = /^(?:passwords?|passwd|pwd|pass)$/i;
/** Flag values of a parameter named like a credential (`?auth=true`, `&pass=1`). */
const NOT_A_VALUE = /^(?:true|false|null|none|empty|yes|no|on|off|\d{1,2})$/i;

/** "PIN", "pin code", passcode or an access code, then 4 to 8 digits. */
const ACCESS_CODE =
  /\b(?:(pin)|(?:door|gate|garage|alarm|safe|lock|entry|access|security|entrance|keypad)[\s-]+code)(?:[\s-]+(code|number|no\.?|#))?(\s*(?::=|[:=])\s*|\s+(?:is|was|ist|est|es|é|è|är|er|je)\s+|\s+)["']?(\d{4,8})(?![\d\p{L}])/giu;

/**
 * Keywords whose following value is judged. Boundaries are checked in code (see keywordAt) so
 * that `apiKey`, `API_KEY` and `APIKEY` count but "monkey", "keyboard" and "tokenizer" do not.
 */
const KEYWORD = /pass(?:words?|wd|phrase|code)|pwd|pw|credentials?|creds|keys?|tokens?|secrets?|bearer|auth(?:orization|entication)?/gi;
const PASSWORD_KEYWORD = /^(?:pass(?:words?|wd|phrase|code)|pwd|pw|credentials?|creds)$/i;
/** Letters that may directly precede a keyword in a run-together identifier (`apikey`, `authtoken`). */
const KEYWORD_PREFIXES = ['api', 'access', 'secret', 'private', 'client', 'app', 'auth', 'oauth', 'refresh', 'session', 'bot', 'master', 'admin', 'account', 'db', 'user', 'root', 'service'];

/** Password words of other languages (matched whole; scripts without spaces need no boundary). */
const FOREIGN_PASSWORD =
  /passwort|kennwort|mot de passe|contrase[ñn]a|senha|wachtwoord|has[łl]o|пароль|parola d'ordine|parola|l[öo]senord|salasana|adgangskode|passord|heslo|jelsz[óo]|[şs]ifre|κωδικός|סיסמה|كلمة المرور|पासवर्ड|mật khẩu|パスワード|暗証番号|密码|密碼|口令|비밀번호|암호/gi;
const SPACELESS_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * What may follow a keyword before its value. Written so that no two adjacent quantifiers can
 * match the same characters (keeps matching linear even on long runs of whitespace).
 */
const STRONG_SEPARATOR = String.raw`(?:\s*(?::=|=>|->|[:=])\s*|\s+(?:is|was|are)(?:\s*:)?\s+|\s+[-–—]\s+)`;
const FOREIGN_SEPARATOR = String.raw`(?:\s*(?::=|[:=])\s*|\s+(?:ist|war|est|es|era|é|è|is|to|jest|är|var|on|er|je|az|был|это|—|-)\s+|\s*[はがも是为為는은이가]\s*)`;
const valueAfter = (separator: string, valueExcludes = '') =>
  new RegExp(
    String.raw`["'\x60]?(?:\s+(?:for|of|to|on|at|in)(?:\s+[^\s:=]{1,40}){1,3}?(${separator})|(${separator})|\s+)(["'\x60]?)([^\s"'\x60<>()[\]{},;${valueExcludes}]{1,256})`,
    'yu',
  );
const VALUE_AFTER_KEYWORD = valueAfter(STRONG_SEPARATOR);
// In scripts without spaces the value ends where the script resumes ("パスワードはabc12345です").
const VALUE_AFTER_FOREIGN = valueAfter(FOREIGN_SEPARATOR, String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}`);

const LETTER = /\p{L}/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;
const LETTERS_ONLY = /^\p{L}{4,64}$/u;
/** A lowercase letter followed by an uppercase one: "BlueElephant", "XkpQmZwLrT". */
const MIXED_CASE_INSIDE = /\p{Ll}\p{Lu}/u;
const ASSIGNMENT = /^\s*(?::=|=>|->|=)/;

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const EMAIL_LIKE = /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i;
const PATH_LIKE = /^(?:~?\/|\.{1,2}\/|[A-Za-z]:\\)/;
/** The clause goes on after the value ("is expired after …"), so a lowercase word is a description. */
const CLAUSE_ENDS = /^["'\x60]?(?:$|[.!?,;:)](?:\s|$)|\s*\n)/;

/** Words that say something about a password instead of being one. */
const DESCRIPTIVE_WORDS = new Set(
  (
    'a an the my your his her our their its this that these those same different new old default temporary wrong right ' +
    'correct incorrect invalid valid required optional mandatory missing empty blank none null nil undefined unknown ' +
    'unset hidden masked redacted encrypted hashed salted stored saved set reset changed updated sent shared written ' +
    'needed forgotten lost known secret private personal obvious simple easy hard difficult complex complicated long ' +
    'short strong weak secure insecure safe unsafe good bad fine okay great terrible sensitive protected unchanged ' +
    'locked blocked disabled enabled active inactive too very really quite still also not never always usually just ' +
    'only being been here there somewhere something anything nothing everything whatever what which who where when ' +
    'why how from with without about like kept stuck taped generated random managed rotated synced identical similar ' +
    'longer shorter stronger weaker better worse please now then later today yesterday tomorrow visible available ' +
    'unavailable necessary unnecessary mine yours hers theirs ours elsewhere below above attached enclosed included ' +
    'inside outside underneath behind done gone fixed broken compromised leaked stolen exposed public standard common ' +
    'popular predictable guessable memorable unique reused generic printed written expiring expired changing ' +
    'incomplete complete ready pending required same also either neither both each every other another some any many ' +
    'much more most less least enough'
  ).split(' '),
);
const DESCRIPTIVE_ENDING = /(?:ed|ing|ly|able|ible|ive|ous|ful|less|ness|ment|tion|sion|ity|ical|ence|ance)$/i;

/** A segment that reads like a word, number or version: `project`, `Alpha`, `README`, `v2`, `utf8`, `2024`. */
const WORDLIKE_SEGMENT = /^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+|[A-Za-z]+\d{1,4}|\d+)$/;

/** Every stored string field of a write, by its domain name (the tools name the argument); a list is checked item by item (`tags[2]`). */
export type StoredFields = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Throws SECRET_REJECTED naming the first field that looks like a secret; its value is never repeated. */
export function rejectSecrets(fields: StoredFields): void {
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') {
      if (looksLikeSecret(value)) throw secretRejected(name);
    } else if (value !== undefined) {
      const index = value.findIndex(looksLikeSecret);
      if (index >= 0) throw secretRejected(`${name}[${index}]`);
    }
  }
}

export function looksLikeSecret(input: string): boolean {
  return looksLikeSecretWithin(input, { depth: 0, decodedBytes: 0 });
}

/** How far base64 is unwrapped: twice (a key in a base64 file in base64), and at most 64 KiB decoded per text. */
const MAX_BASE64_DEPTH = 2;
const MAX_DECODED_BYTES = 64 * 1024;

function looksLikeSecretWithin(input: string, budget: { depth: number; decodedBytes: number }): boolean {
  // Full-width and compatibility forms read as ASCII; zero-width and other format characters are dropped.
  const text = input.normalize('NFKC').replace(/\p{Cf}/gu, '');
  return (
    hasKnownFormat(text) ||
    PRIVATE_KEY_BODY.test(text) ||
    hasAwsSecretKey(text) ||
    hasCredentialInUrl(text) ||
    hasAccessCode(text) ||
    hasKeywordWithSecretValue(text) ||
    hasSecretNamedAssignment(text) ||
    hasPassphrase(text) ||
    isBareKeyBlob(text) ||
    hasSecretInBase64(text, budget)
  );
}

/** A run of base64 (standard or URL-safe), possibly wrapped over lines as tools wrap it (76 or 64 a line). */
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}/g;

/**
 * Base64 that decodes to text is read again as text: a key, a credentials file or an .env wrapped in base64 (as
 * a Kubernetes secret holds it) is still a secret. Bounded: MAX_BASE64_DEPTH levels, MAX_DECODED_BYTES in all.
 */
function hasSecretInBase64(text: string, budget: { depth: number; decodedBytes: number }): boolean {
  if (budget.depth >= MAX_BASE64_DEPTH) return false;
  for (const m of text.matchAll(BASE64_RUN)) {
    const run = m[0].replace(/\r?\n/g, '');
    if (!/[0-9+/=]/.test(run) || budget.decodedBytes >= MAX_DECODED_BYTES) continue;
    const bytes = Buffer.from(run.slice(0, Math.ceil(((MAX_DECODED_BYTES - budget.decodedBytes) * 4) / 3)), 'base64');
    budget.decodedBytes += bytes.length;
    const decoded = decodedText(bytes);
    if (decoded !== undefined && looksLikeSecretWithin(decoded, { depth: budget.depth + 1, decodedBytes: budget.decodedBytes })) return true;
  }
  return false;
}

/** The bytes as text when they are UTF-8 and nearly all printable; undefined for binary. */
function decodedText(bytes: Buffer): string | undefined {
  if (bytes.length < 8) return undefined;
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD')) return undefined;
  let printable = 0;
  for (const ch of text) if (ch >= ' ' || ch === '\n' || ch === '\r' || ch === '\t') printable++;
  return printable >= text.length * 0.95 ? text : undefined;
}

/**
 * A credential-named identifier assigned a random value: `SECRET_KEY_BASE=<128 hex>`, `"private_key_id": "<40
 * hex>"`, `auth_token: …`. The name is made of `_`/`-` segments, one of them credential wording; public things
 * (`public_key`, a `*_hash`, `*_fingerprint`) are not credentials.
 */
const SECRET_NAMED_ASSIGNMENT = /(?<![A-Za-z0-9_-])["']?([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)["']?\s{0,8}(?::=|=>|[:=])\s{0,8}["']?([^\s"'\x60<>()[\]{},;]{16,512})/g;
const SECRET_NAME_SEGMENT = /^(?:secret|token|password|passwd|pwd|passphrase|credentials?|private|auth)$/i;
const PUBLIC_NAME_SEGMENT = /^(?:public|pub|hash|checksum|digest|fingerprint|sha\d*|md5|uri|url|endpoint|type|file|path|name)$/i;

function hasSecretNamedAssignment(text: string): boolean {
  for (const m of text.matchAll(SECRET_NAMED_ASSIGNMENT)) {
    const segments = m[1]!.split(/[_-]/);
    if (!segments.some((segment) => SECRET_NAME_SEGMENT.test(segment)) || segments.some((segment) => PUBLIC_NAME_SEGMENT.test(segment))) continue;
    const value = m[2]!.replace(/[.,:;!?]+$/, '');
    if (URL_LIKE.test(value) || PLACEHOLDER.test(value) || looksLikePath(value)) continue;
    if (looksRandom(value)) return true;
  }
  return false;
}

/**
 * A passphrase or a wallet's seed phrase written out: three to 24 words after "passphrase", "seed phrase" or
 * "recovery phrase" and a separator, joined by spaces or `-_.`, none of them a function word ("correct horse
 * battery staple"; not "I always forget it" nor "stored in the vault"), or 12 to 24 lowercase words (a mnemonic).
 */
const PASSPHRASE = /\b(?:pass\s?phrase|(?:seed|recovery|mnemonic)\s+phrase|mnemonic)s?(?:\s*(?::=|=>|[:=])\s*|\s+(?:is|was)(?:\s*:)?\s+)["'\x60]?((?:\p{L}{2,16}[\s._-]){2,23}\p{L}{2,16})(?=["'\x60]?(?:$|[.!?,;)]|\s*\n))/giu;
const FUNCTION_WORDS = new Set(
  (
    'i me my you your he him his she her it its we us our they them their a an the this that these those is are was ' +
    'were be been am do does did have has had will would can could should may might must shall not no yes and or but ' +
    'if then so to of in on at by for with from into onto about as than too very also just only still always never ' +
    'in out up down over under again there here where when what which who how why all any some each every same ' +
    'stored saved kept written see ask check use used'
  ).split(' '),
);

function hasPassphrase(text: string): boolean {
  for (const m of text.matchAll(PASSPHRASE)) {
    const words = m[1]!.split(/[\s._-]+/);
    if (words.length >= 3 && words.every((word) => !FUNCTION_WORDS.has(word.toLowerCase()))) return true;
    // A BIP-39 mnemonic (12 to 24 lowercase words) has common words among them ("about", "above").
    if (words.length >= 12 && words.every((word) => /^\p{Ll}+$/u.test(word))) return true;
  }
  return false;
}

/**
 * A text that is nothing but random bytes in base64, 32 or more (a symmetric key, a seed, a session secret):
 * stored alone it has no other use. Text in base64 is read as text instead (hasSecretInBase64).
 */
function isBareKeyBlob(text: string): boolean {
  const token = text.trim().replace(/^["'\x60]|["'\x60]$/g, '');
  if (!/^[A-Za-z0-9+/_-]{43,}={0,2}$/.test(token) || token.startsWith('AAAA') || !looksRandom(token)) return false;
  const bytes = Buffer.from(token, 'base64');
  return bytes.length >= 32 && decodedText(bytes) === undefined;
}

function hasKnownFormat(text: string): boolean {
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
  return false;
}

function hasAwsSecretKey(text: string): boolean {
  for (const m of text.matchAll(AWS_SECRET_CANDIDATE)) {
    const value = m[0];
    const lower = /[a-z]/.test(value);
    const upper = /[A-Z]/.test(value);
    const digit = /[0-9]/.test(value);
    const symbol = /[/+]/.test(value);
    if (Number(lower) + Number(upper) + Number(digit) + Number(symbol) < 3) continue;
    if (AWS_SECRET_CONTEXT.test(text.slice(Math.max(0, m.index - 80), m.index))) return true;
    if (lower && upper && (digit || symbol) && shannonEntropy(value) >= 4 && wordCoverage(value) < 0.75 && !insideUrl(text, m.index)) {
      // A line of base64 text (a wrapped file's last line) decodes to words; a key decodes to random bytes.
      if (decodedText(Buffer.from(value, 'base64')) === undefined) return true;
    }
  }
  return false;
}

/**
 * The share of `value` in camelCase words. Identifiers score high (`ThisIsAVeryLongCamelCaseMethodNameNo1234`:
 * 0.78); 40 random base64 characters score 0.3 on average and 0.75 or more about once in a thousand.
 */
function wordCoverage(value: string): number {
  let covered = 0;
  for (const word of value.matchAll(CAMEL_WORD)) covered += word[0].length;
  return covered / value.length;
}

/** Whether position `at` lies in a whitespace-delimited token that is a URL (`https://…`, `www.…`). */
function insideUrl(text: string, at: number): boolean {
  let start = at;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  const token = text.slice(start, at);
  return token.includes('://') || token.startsWith('www.');
}

function hasCredentialInUrl(text: string): boolean {
  for (const m of text.matchAll(URL_USERINFO)) {
    const password = m[1]!;
    // `host:8080/path/@user` is a port and a path, not a password.
    if (/^\d{1,5}(?:\/|$)/.test(password) || PLACEHOLDER.test(password)) continue;
    return true;
  }
  for (const m of text.matchAll(ORACLE_USER_PASSWORD)) {
    if (!PLACEHOLDER.test(m[1]!)) return true;
  }
  for (const m of text.matchAll(URL_PARAMETER)) {
    const value = m[2]!;
    if (PLACEHOLDER.test(value) || NOT_A_VALUE.test(value)) continue;
    if (PASSWORD_PARAMETER.test(m[1]!)) return true;
    if (looksRandom(value) || (value.length >= 12 && /[0-9]/.test(value) && LETTER.test(value))) return true;
  }
  return false;
}

function hasAccessCode(text: string): boolean {
  for (const m of text.matchAll(ACCESS_CODE)) {
    const [, pin, suffix, separator] = m;
    // "pin" is also a pin on a board or a map: unless written PIN, only "pin is 1234", "pin: 1234", "pin code 1234".
    if (pin !== undefined && pin !== 'PIN' && suffix === undefined && separator!.trim() === '') continue;
    return true;
  }
  return false;
}

function hasKeywordWithSecretValue(text: string): boolean {
  for (const m of text.matchAll(KEYWORD)) {
    const start = m.index;
    const keyword = m[0];
    const end = start + keyword.length;
    if (!isKeywordBoundary(text, start, end)) continue;
    if (valueIsSecret(text, end, VALUE_AFTER_KEYWORD, PASSWORD_KEYWORD.test(keyword) ? 'english' : 'none')) return true;
  }
  for (const m of text.matchAll(FOREIGN_PASSWORD)) {
    const end = m.index + m[0].length;
    if (!SPACELESS_SCRIPT.test(m[0]) && (LETTER.test(text[m.index - 1] ?? '') || LETTER.test(text[end] ?? ''))) continue;
    if (valueIsSecret(text, end, VALUE_AFTER_FOREIGN, 'other-language')) return true;
  }
  return false;
}

/** Judges the value after a keyword that ends at `end`; `password` says which password rules apply. */
function valueIsSecret(text: string, end: number, valueRe: RegExp, password: 'english' | 'other-language' | 'none'): boolean {
  valueRe.lastIndex = end;
  const match = valueRe.exec(text);
  if (!match) return false;
  const separator = match[1] ?? match[2];
  const quoted = (match[3] ?? '') !== '';
  const raw = match[4] ?? '';
  const candidate = raw.replace(/[.,:;!?]+$/, '');
  if (candidate === '' || URL_LIKE.test(candidate) || EMAIL_LIKE.test(candidate) || PLACEHOLDER.test(candidate) || looksLikePath(candidate)) {
    return false;
  }
  if (looksRandom(candidate)) return true;
  if (password === 'none') return false;
  const strong = separator !== undefined;
  if (looksLikePassword(candidate, strong)) return true;
  if (!strong || !LETTERS_ONLY.test(candidate)) return false;
  if (MIXED_CASE_INSIDE.test(candidate)) return true;
  if (password !== 'english' || DESCRIPTIVE_WORDS.has(candidate.toLowerCase())) return false;
  if (quoted || ASSIGNMENT.test(separator)) return true;
  // A word after "is", ":" or " - ": a password only when it ends the clause ("… is Marmalade.", not "…: Maria
  // knows it"), and, in lowercase, reads like no description.
  const valueEnd = valueRe.lastIndex - raw.length + candidate.length;
  if (!CLAUSE_ENDS.test(text.slice(valueEnd, valueEnd + 3))) return false;
  return UPPER.test(candidate[0]!) || !DESCRIPTIVE_ENDING.test(candidate);
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

/** A file path (`/home/alice/.ssh/id_ed25519`), not base64 that happens to start with `/` (no `+`, `=` or long random segment). */
function looksLikePath(value: string): boolean {
  if (!PATH_LIKE.test(value) || /[+=]/.test(value)) return false;
  return value.split(/[\\/]/).every((segment) => segment.length < 16 || isIdentifierLike(segment));
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

/**
 * Something a person would choose as a password: 6 to 128 characters mixing letters and digits, or with a
 * symbol next to letters or digits, or all digits (4 or more after a separator such as "is", else 6).
 */
function looksLikePassword(value: string, strong: boolean): boolean {
  const length = [...value].length;
  if (/^[0-9]+$/.test(value)) return length >= (strong ? 4 : 6) && length <= 128;
  if (length < 6 || length > 128) return false;
  const hasDigit = /[0-9]/.test(value);
  const hasLetter = LETTER.test(value);
  const hasSymbol = /[^\p{L}\p{N}'\u2019-]/u.test(value);
  if (hasDigit && hasLetter) return true;
  return hasSymbol && (hasLetter || hasDigit);
}
