import { describe, it, expect } from 'vitest';
import { looksLikeSecret } from '../../src/memory/secrets.js';
import { mulberry32 } from '../helpers/prng.js';

/*
 * Every "key" below is fake. Random-looking bodies come from a seeded PRNG so that the corpus is
 * deterministic, looks like the real formats, and no literal provider key sits in the source.
 */
const random = mulberry32(0x5eed);
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const UPPER_ALNUM = UPPER + DIGITS;
const HEX = '0123456789abcdef';
const B64 = ALNUM + '+/';
const B64URL = ALNUM + '-_';
function rnd(length: number, alphabet: string = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}
const b64url = (json: object): string => Buffer.from(JSON.stringify(json)).toString('base64url');
const fakeJwt = (): string =>
  `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '1234567890', name: 'Jane Doe', iat: 1716239022 })}.${rnd(43, B64URL)}`;

const pem = (label: string): string => `-----BEGIN ${label}-----\n${rnd(64, B64)}\n${rnd(64, B64)}\n-----END ${label}-----`;

const ORDINARY_PARAGRAPH =
  'The user lives in Lisbon, works as a backend engineer and prefers short answers. ' +
  'She is learning Portuguese, has two cats called Miso and Tofu, and usually deploys on Fridays (against advice). ' +
  'Her favourite editor is Neovim; she keeps notes in /home/ana/notes/2024-05-01.md and reads https://example.com/blog daily. ' +
  'Meetings on 12/05/2024 at 14:30 were moved; call +351 912 345 678 if late. Order #123-4567890-1234567 shipped. ';
const LONG_ORDINARY_TEXT = ORDINARY_PARAGRAPH.repeat(Math.ceil(16000 / ORDINARY_PARAGRAPH.length)).slice(0, 16000);
const half = LONG_ORDINARY_TEXT.slice(0, 8000);
const LONG_TEXT_WITH_HIDDEN_KEY = `${half} and the deploy key is ghp_${rnd(36)} so keep it safe. ${half}`;

const positives: Array<[string, string]> = [
  // OpenAI / Anthropic
  ['OpenAI legacy key, bare', `sk-${rnd(48)}`],
  ['OpenAI project key in a sentence', `here is my key: sk-proj-${rnd(64, B64URL)}`],
  ['OpenAI key in an env assignment', `export OPENAI_API_KEY=sk-${rnd(48)}`],
  ['Anthropic key', `use sk-ant-api03-${rnd(93, B64URL)}AA for the claude calls`],
  // AWS
  ['AWS access key id (AKIA), bare', `AKIA${rnd(16, UPPER_ALNUM)}`],
  ['AWS temporary key id (ASIA) in a sentence', `my access key id is ASIA${rnd(16, UPPER_ALNUM)} for the staging account`],
  ['AWS secret access key after aws wording', `aws creds: wJalrXUtnFEMI/${rnd(27, B64)}`],
  ['AWS secret access key as env assignment', `AWS_SECRET_ACCESS_KEY=${rnd(20, B64)}/${rnd(19, B64)}`],
  // GitHub / GitLab
  ['GitHub classic PAT (ghp_), bare', `ghp_${rnd(36)}`],
  ['GitHub OAuth token (gho_)', `oauth token gho_${rnd(36)}`],
  ['GitHub user-to-server token (ghu_)', `ghu_${rnd(36)} is what the app uses`],
  ['GitHub server-to-server token (ghs_)', `ghs_${rnd(36)}`],
  ['GitHub refresh token (ghr_)', `refresh with ghr_${rnd(76)}`],
  ['GitHub fine-grained PAT', `my github token github_pat_11${rnd(20, UPPER_ALNUM)}_${rnd(59)}`],
  ['GitLab PAT', `glpat-${rnd(20, B64URL)}`],
  // Slack
  ['Slack bot token', `xoxb-${rnd(12, DIGITS)}-${rnd(13, DIGITS)}-${rnd(24)}`],
  ['Slack user token in a sentence', `the slack token is xoxp-${rnd(12, DIGITS)}-${rnd(12, DIGITS)}-${rnd(13, DIGITS)}-${rnd(32, HEX)}`],
  ['Slack app token', `xapp-1-A${rnd(10, UPPER_ALNUM)}-${rnd(13, DIGITS)}-${rnd(64, HEX)}`],
  ['Slack legacy xoxa / xoxr tokens', `xoxa-2-${rnd(40)} and xoxr-${rnd(40)}`],
  ['Slack incoming webhook URL', `post alerts to https://hooks.slack.com/services/T${rnd(8, UPPER_ALNUM)}/B${rnd(8, UPPER_ALNUM)}/${rnd(24)}`],
  // Stripe
  ['Stripe live secret key', `sk_live_${rnd(99)}`],
  ['Stripe test secret key in a sentence', `for the sandbox use sk_test_${rnd(24)} please`],
  ['Stripe restricted key', `rk_live_${rnd(24)}`],
  // Other providers
  ['Google API key', `maps key AIza${rnd(35, B64URL)}`],
  ['Twilio API key SID', `SK${rnd(32, HEX)}`],
  ['SendGrid API key', `SENDGRID: SG.${rnd(22, B64URL)}.${rnd(43, B64URL)}`],
  ['npm token', `//registry.npmjs.org/:_authToken=npm_${rnd(36)}`],
  ['Hugging Face token', `hf_${rnd(34)}`],
  ['DigitalOcean token', `do token dop_v1_${rnd(64, HEX)}`],
  ['Shopify access token', `shpat_${rnd(32, HEX)}`],
  ['Google OAuth client secret', `client_secret: GOCSPX-${rnd(28, B64URL)}`],
  // JWTs
  ['JWT, bare', fakeJwt()],
  ['JWT in an Authorization header', `Authorization: Bearer ${fakeJwt()}`],
  // Private keys
  ['PEM RSA private key', pem('RSA PRIVATE KEY')],
  ['PEM PKCS#8 private key in a sentence', `here is the cert key:\n${pem('PRIVATE KEY')}`],
  ['PEM EC private key', pem('EC PRIVATE KEY')],
  ['OpenSSH private key', pem('OPENSSH PRIVATE KEY')],
  ['Encrypted private key', pem('ENCRYPTED PRIVATE KEY')],
  ['PGP private key block', pem('PGP PRIVATE KEY BLOCK')],
  ['private key header alone', 'my server key starts with -----BEGIN RSA PRIVATE KEY-----'],
  // Keyword + value
  ['password with symbols', 'my password is Tr0ub4dor&3xK9!pQ'],
  ['api_key assignment with 40 hex', 'api_key=9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a'],
  ['Bearer token', 'Bearer abcdefGHIJ1234567890klmnop'],
  ['wifi password after a colon', 'the wifi password: hunter2hunter2XyZ'],
  ['short password after "password is"', 'my password is hunter2'],
  ['password for something is …', 'the password for my bank account is Xk9#mP2q'],
  ['40 hex after "token:"', 'token: 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b'],
  ['40 hex after "secret="', 'secret=3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b'],
  ['DB_PASSWORD env var', 'DB_PASSWORD=correct-horse-42'],
  ['camelCase apiKey with quoted value', `const apiKey = "${rnd(32)}";`],
  ['Azure connection string AccountKey', `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${rnd(86, B64)}==;`],
  ['pwd with a seasonal password', 'pwd=Summer2024!'],
  ['numeric password', 'my password is 48213977'],
  ['passphrase', 'gpg passphrase: blue-Falcon-77-river'],
  ['credentials with user/password pair', 'credentials: admin/Sup3rS3cret!'],
  ['client secret', `client secret is ${rnd(40, B64URL)}`],
  ['access token in JSON', `{"access_token": "${rnd(40)}", "expires_in": 3600}`],
  ['UUID after "api key:"', 'Heroku api key: 550e8400-e29b-41d4-a716-446655440000'],
  ['URL with embedded password', 'connect with postgres://admin:S3cr3tPa55@db.internal.example.com:5432/app'],
  ['HTTP basic auth header', `Authorization: Basic ${Buffer.from(`admin:${rnd(12)}`).toString('base64')}`],
  ['long ordinary text with a key hidden in the middle', LONG_TEXT_WITH_HIDDEN_KEY],
];

const negatives: Array<[string, string]> = [
  ['mentions forgetting a password', 'I forgot my password again'],
  ['token-based auth preference', 'the user prefers token-based auth'],
  ['key rotation reminder', 'Remember to rotate the API key every 90 days'],
  ['key to success', 'my key to success is patience'],
  ['password policy', 'the password must be at least 12 characters long'],
  ['passwords stored hashed', 'passwords are stored hashed with argon2id'],
  ['password reset', 'the password reset link expired after an hour'],
  ['secret ingredient', 'the secret ingredient is cinnamon'],
  ['advice about keys', 'API keys should live in a secrets manager, not in code'],
  ['auth handled elsewhere', 'auth: handled by the gateway'],
  ['bearer of news', 'she was the bearer of good news'],
  ['physical keys', 'my keys are on the kitchen table'],
  ['token count', 'token count: 128000'],
  ['tokenizer name', 'uses the tokenizer bert-base-uncased-v2'],
  ['keyboard shortcut', 'Keyboard shortcut: Ctrl+Shift+P'],
  ['a monkey named', 'my monkey is named Bobo2000'],
  ['cache key path', 'Cache key: user:1234:profile:settings'],
  ['token slug', 'token: my-project-name-2024'],
  ['OAuth flow', 'OAuth2 authorization code flow with PKCE and S256'],
  ['40-hex commit hash', 'fixed in commit 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b'],
  ['7-hex short commit hash', 'see commit 3f2a9c1 for the fix'],
  ['git tag and short hash', 'the git tag v1.4.0 points at 9fceb02'],
  ['SHA-256 checksum', 'SHA-256 of the file is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['UUID', 'order 550e8400-e29b-41d4-a716-446655440000'],
  ['order number', 'order #123-4567890-1234567'],
  ['US phone number', 'call me at +1 (415) 555-0132'],
  ['UK phone number', 'office: +44 20 7946 0958'],
  ['ordinary numbers', 'the population is 8,336,817 and the area is 783.8 km²'],
  ['lottery numbers', 'my lucky numbers are 4 8 15 16 23 42'],
  ['ISO date', 'born 1990-04-12'],
  ['date and time', 'meeting on 12/05/2024 at 14:30 CET'],
  ['ISBN', 'ISBN 978-3-16-148410-0'],
  ['IP address', 'the NAS is at 192.168.1.20'],
  ['version string', 'version 2.3.1-beta+build.20240501'],
  ['SKU', 'SKU: AB-12345-XY'],
  ['URL without credentials', 'https://example.com/docs/getting-started?lang=en&page=2#install'],
  ['GitHub PR URL', 'https://github.com/acme/widgets/pull/1234'],
  ['database URL without credentials', 'the DB is at postgres://localhost:5432/app'],
  ['ssh clone URL', 'clone ssh://git@github.com/acme/repo.git'],
  ['email address', 'write to alice.smith+news@example.co.uk'],
  ['German sentence', 'Ich habe mein Passwort schon wieder vergessen.'],
  ['French sentence', 'Le mot de passe est trop court, dit-elle.'],
  ['Japanese sentence', 'パスワードを忘れました。明日また試します。'],
  ['Spanish sentence', 'Mi contraseña favorita es muy larga y difícil de recordar'],
  ['long English word', 'Pneumonoultramicroscopicsilicovolcanoconiosis is a long word'],
  ['long German compound', 'Donaudampfschifffahrtsgesellschaftskapitän'],
  ['Unix path', '/home/alice/projects/memory-service/src/index.ts'],
  ['Windows path', 'C:\\Users\\Alice\\Documents\\report-2024.docx'],
  ['Stripe customer id', 'Stripe customer cus_NffrFeUfNV2Hib'],
  ['camelCase identifier in prose', 'the function is called getUserPreferencesFromCache'],
  ['long ordinary text', LONG_ORDINARY_TEXT],
];

describe('looksLikeSecret', () => {
  it('has a corpus of at least 40 positives and 40 negatives', () => {
    expect(positives.length).toBeGreaterThanOrEqual(40);
    expect(negatives.length).toBeGreaterThanOrEqual(40);
  });

  it.each(positives)('rejects %s', (_name, text) => {
    expect(looksLikeSecret(text)).toBe(true);
  });

  it.each(negatives)('accepts %s', (_name, text) => {
    expect(looksLikeSecret(text)).toBe(false);
  });

  it('returns a plain boolean and is repeatable (no regex state leaks between calls)', () => {
    const text = `key: ghp_${rnd(36)}`;
    expect(looksLikeSecret(text)).toBe(true);
    expect(looksLikeSecret(text)).toBe(true);
    expect(looksLikeSecret('nothing to see')).toBe(false);
  });
});
