import type { Session } from '../session/session.ts';

/**
 * Who may use the embed studio (`<base>/studio`) and what it offers. The studio mints public
 * ids for the signed-in session, so it is off unless the host says who may publish.
 */
export interface StudioRule {
  /** Which signed-in sessions may open the studio and mint, list and revoke their embeds. */
  allow: (session: Session) => boolean | Promise<boolean>;
  /**
   * The registry queries offered, by name. Each still passes its own `signers` rule, and its
   * session parameters (the tenant) are filled from the session. @default every registry query
   */
  queries?: readonly string[];
}
