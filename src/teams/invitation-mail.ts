import type { InvitableRole } from '../access/roles';

export interface InvitationMailInput {
  to: string;
  teamName: string;
  inviterName: string;
  role: InvitableRole;
  /** The dashboard's page that accepts the invitation, with its token. */
  acceptUrl: string;
  expiresAt: Date;
}

/** What each role may do, in the invitee's words. */
const ROLE_MEANING: Record<InvitableRole, string> = {
  viewer: "read the team's endpoints, events and deliveries",
  member: "read and change the team's endpoints and destinations, and replay events",
  admin: "change the team's endpoints and destinations, replay events, and manage its members",
};

/** The accept page of the dashboard (a hash route) for an invitation token. */
export function acceptUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/#/invitations/accept?token=${encodeURIComponent(token)}`;
}

/**
 * The invitation mail: plain text (the link is the one thing to act on, and mail clients make it
 * clickable), saying who invited whom to what, with which role, and until when the link works.
 */
export function invitationMail(input: InvitationMailInput): { to: string; subject: string; text: string } {
  const text = [
    'Hi,',
    '',
    `${input.inviterName} invited you to join the team "${input.teamName}" on Hooktrail as ${input.role}: you will be able to ${ROLE_MEANING[input.role]}.`,
    '',
    'Accept the invitation (sign in, or register with this email address, first):',
    `  ${input.acceptUrl}`,
    '',
    `The link works once, until ${input.expiresAt.toISOString()}. If you did not expect this invitation, ignore this mail.`,
  ].join('\n');
  return {
    to: input.to,
    subject: `[Hooktrail] ${input.inviterName} invited you to the team "${input.teamName}"`,
    text,
  };
}
