/**
 * A setting's value as it may be printed (configuration errors, the startup log line): the password of a URL
 * (`postgres://user:password@host`) and password-like query parameters (`?password=…`, `sslpassword`, `token`,
 * `api_key`, …) become `***`. Works on text that is not a valid URL too, since invalid values are the ones
 * echoed back.
 */
const USERINFO_PASSWORD = /(\/\/[^\s/?#@:]*:)\S*@/g;
const SECRET_PARAMETER = /([?&;](?:ssl)?(?:password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token|client[_-]?secret|sslkey)=)[^&#;\s]*/gi;

export function redactCredentials(value: string): string {
  return value.replace(USERINFO_PASSWORD, '$1***@').replace(SECRET_PARAMETER, '$1***');
}
