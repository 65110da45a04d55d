/** The console's session cookie: a random id, signed, HttpOnly, SameSite=Strict. */
export const SESSION_COOKIE = 'cp_console'
/** The sign-in form's own token (double submit): a sign-in cannot be posted from another site. */
export const SIGN_IN_COOKIE = 'cp_console_sign_in'
