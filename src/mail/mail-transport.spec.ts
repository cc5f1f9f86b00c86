import { SMTP_TIMEOUTS_MS, smtpTransportUrl } from '../outbound/mail-transport.module';

describe('smtpTransportUrl', () => {
  it('adds the time-outs to SMTP_URL, keeping its credentials as written', () => {
    const url = new URL(smtpTransportUrl('smtps://alerts%40example.com:p%3Ass@mail.example.com:465'));
    expect(url.protocol).toBe('smtps:');
    expect([url.username, url.password, url.host]).toEqual([
      'alerts%40example.com',
      'p%3Ass',
      'mail.example.com:465',
    ]);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      connectionTimeout: String(SMTP_TIMEOUTS_MS.connectionTimeout),
      greetingTimeout: String(SMTP_TIMEOUTS_MS.greetingTimeout),
      socketTimeout: String(SMTP_TIMEOUTS_MS.socketTimeout),
    });
  });

  it("keeps SMTP_URL's own time-outs and other parameters", () => {
    const url = new URL(smtpTransportUrl('smtp://127.0.0.1:1025/?socketTimeout=120000&ignoreTLS=true'));
    expect(url.searchParams.get('socketTimeout')).toBe('120000');
    expect(url.searchParams.get('ignoreTLS')).toBe('true');
    expect(url.searchParams.get('greetingTimeout')).toBe(String(SMTP_TIMEOUTS_MS.greetingTimeout));
  });
});
