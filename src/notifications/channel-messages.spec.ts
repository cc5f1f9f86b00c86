import { chatBody, composeMessage, DISCORD_CONTENT_LIMIT, messageId, testMessage } from './channel-messages';
import type { PendingNotification } from './notification-channel';

const SITE = 'https://hooktrail.example';

function deadLetter(id: string, count: number): PendingNotification {
  return {
    id,
    type: 'dead_letter',
    data: { endpoint: { id: 'endpoint-1', name: 'Stripe (prod)' }, count, events: [] },
    createdAt: new Date('2026-11-25T10:00:00Z'),
  };
}

function issueOpened(id: string): PendingNotification {
  return {
    id,
    type: 'issue.opened',
    data: {
      issue: {
        id: `issue-${id}`,
        kind: 'http_5xx',
        summary: 'HTTP 503',
        destination: { url: 'https://api.example.com/hooks' },
      },
    },
    createdAt: new Date('2026-11-25T10:01:00Z'),
  };
}

describe(composeMessage.name, () => {
  it('sends a single notification as itself: its webhook body is {type, data, created_at}', () => {
    const sut = composeMessage([deadLetter('1', 3)], SITE);
    expect(sut.subject).toBe('[Hooktrail] 3 webhooks dead-lettered on "Stripe (prod)"');
    expect(sut.text).toBe(
      '3 webhooks dead-lettered on "Stripe (prod)" — https://hooktrail.example/#/endpoints/endpoint-1',
    );
    expect(sut.webhookBody).toEqual({
      type: 'dead_letter',
      data: deadLetter('1', 3).data,
      created_at: '2026-11-25T10:00:00.000Z',
    });
  });

  it('digests several into one chat message or mail that counts them and the webhooks dead-lettered, with no webhook form', () => {
    const pending = [
      deadLetter('1', 12),
      issueOpened('2'),
      ...Array.from({ length: 60 }, (_, i) => deadLetter(`${i + 3}`, 1)),
    ];
    const sut = composeMessage(pending, SITE);
    expect(sut.subject).toBe('[Hooktrail] 62 notifications (72 webhooks dead-lettered)');
    const lines = sut.text.split('\n');
    expect(lines[0]).toBe(
      'Hooktrail: 62 notifications (72 webhooks dead-lettered) since 2026-11-25T10:00:00.000Z',
    );
    expect(lines[2]).toBe(
      '• Issue opened on https://api.example.com/hooks: HTTP 503 — https://hooktrail.example/#/issues',
    );
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines[21]).toBe('…and 42 more');
    // A webhook channel is read by a program: it gets one message per notification, never a digest.
    expect(sut.webhookBody).toBeUndefined();
  });

  it('names a paused destination and its endpoint', () => {
    const sut = composeMessage(
      [
        {
          id: '1',
          type: 'destination.paused',
          data: {
            destination: { url: 'https://api.example.com/hooks', paused_reason: '20 consecutive failures' },
            endpoint_id: 'endpoint-9',
          },
          createdAt: new Date(),
        },
      ],
      SITE,
    );
    expect(sut.text).toContain('Destination https://api.example.com/hooks paused (20 consecutive failures)');
    expect(sut.text).toContain('https://hooktrail.example/#/endpoints/endpoint-9');
  });
});

describe(chatBody.name, () => {
  it("gives Slack {text} and Discord {content} cut to Discord's limit", () => {
    const long = { ...testMessage('channel-1'), text: 'x'.repeat(5000) };
    expect(chatBody('slack', long)).toEqual({ text: long.text });
    const { content } = chatBody('discord', long);
    expect(content).toHaveLength(DISCORD_CONTENT_LIMIT);
    expect(content.endsWith('…')).toBe(true);
  });
});

describe(messageId.name, () => {
  it('is the same for the same notifications, and another once the message holds more or others', () => {
    const first = messageId('channel-1', ['n-1', 'n-2']);
    expect(messageId('channel-1', ['n-2', 'n-1'])).toBe(first);
    expect(messageId('channel-1', ['n-1', 'n-2', 'n-3'])).not.toBe(first);
    expect(messageId('channel-1', ['n-1'])).not.toBe(first);
    expect(messageId('channel-2', ['n-1', 'n-2'])).not.toBe(first);
    expect(first).toMatch(/^ntf_channel-1_[\w-]{22}$/);
  });
});
