import { acceptUrl, invitationMail } from './invitation-mail';

describe(invitationMail.name, () => {
  const sut = invitationMail({
    to: 'ada@example.com',
    teamName: 'Payments',
    inviterName: 'Grace',
    role: 'member',
    acceptUrl: 'https://hooks.example.com/#/invitations/accept?token=abc',
    expiresAt: new Date('2026-12-03T10:00:00.000Z'),
  });

  it('is addressed to the invitee and names the inviter and the team', () => {
    expect(sut.to).toBe('ada@example.com');
    expect(sut.subject).toBe('[Hooktrail] Grace invited you to the team "Payments"');
  });

  it('gives the role, the link on a line of its own, and when it stops working', () => {
    expect(sut.text).toContain('Grace invited you to join the team "Payments" on Hooktrail as member');
    expect(sut.text.split('\n')).toContain('  https://hooks.example.com/#/invitations/accept?token=abc');
    expect(sut.text).toContain('until 2026-12-03T10:00:00.000Z');
  });
});

describe(acceptUrl.name, () => {
  it("is the dashboard's hash route, the token escaped for the query string", () => {
    expect(acceptUrl('https://hooks.example.com', 'a-b_c')).toBe(
      'https://hooks.example.com/#/invitations/accept?token=a-b_c',
    );
    expect(acceptUrl('http://localhost:3000', 'a+b/c=')).toBe(
      'http://localhost:3000/#/invitations/accept?token=a%2Bb%2Fc%3D',
    );
  });
});
