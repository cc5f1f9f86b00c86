import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { type SignedRequest, type VerificationRule, verifySignature } from './verification';

// Signatures come from the providers' own libraries or from literal vectors computed once with
// `openssl dgst -<alg> -hmac <secret>`, never from the code under test.

const MODES = ['flag', 'enforce'] as const;
const NO_MATCH = {
  status: 'failed',
  reason: 'no signature matches the secret (body changed or wrong secret)',
};
const VERIFIED = { status: 'verified', reason: null };
/** A fixed signing time, in seconds, for the timestamped schemes. */
const SIGNED_AT = 1_700_000_000;
const JSON_BODY = '{"id":"evt_1","type":"invoice.paid","amount":1200}';

function request(headers: SignedRequest['headers'], body: string | Buffer = JSON_BODY): SignedRequest {
  return { headers, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
}

describe(verifySignature.name, () => {
  describe.each(MODES)('in %s mode', (mode) => {
    describe('stripe', () => {
      const secret = 'whsec_test_0123456789abcdef';
      const rule: VerificationRule = { provider: 'stripe', secret, mode };
      const stripe = new Stripe('sk_test_unused');
      const header = stripe.webhooks.generateTestHeaderString({
        payload: JSON_BODY,
        secret,
        timestamp: SIGNED_AT,
      });
      const sut = (req: SignedRequest, nowSeconds = SIGNED_AT + 10) =>
        verifySignature(rule, req, nowSeconds * 1000);

      it('verifies a signature made by the Stripe SDK', () => {
        expect(sut(request({ 'stripe-signature': header }))).toEqual(VERIFIED);
      });

      it('verifies when any of several v1 signatures matches, and uses the first of a repeated header', () => {
        const [t, v1] = header.split(',');
        expect(sut(request({ 'stripe-signature': `${t},v1=${'0'.repeat(64)},${v1},v0=abc` }))).toEqual(
          VERIFIED,
        );
        expect(sut(request({ 'stripe-signature': [header, 't=1,v1=00'] }))).toEqual(VERIFIED);
      });

      it('fails a wrong secret and a tampered body', () => {
        const other = stripe.webhooks.generateTestHeaderString({
          payload: JSON_BODY,
          secret: 'whsec_other',
          timestamp: SIGNED_AT,
        });
        expect(sut(request({ 'stripe-signature': other }))).toEqual(NO_MATCH);
        expect(sut(request({ 'stripe-signature': header }, JSON_BODY.replace('1200', '1201')))).toEqual(
          NO_MATCH,
        );
      });

      it('fails a missing or malformed header', () => {
        expect(sut(request({}))).toEqual({ status: 'failed', reason: 'missing the Stripe-Signature header' });
        expect(sut(request({ 'stripe-signature': `t=${SIGNED_AT}` })).reason).toBe(
          'the Stripe-Signature header has no v1 signature',
        );
        expect(sut(request({ 'stripe-signature': header.replace(/^t=\d+/, 't=soon') })).reason).toBe(
          'malformed timestamp (t=) in the Stripe-Signature header',
        );
      });

      it('fails an old or a future timestamp beyond the tolerance, and honours a custom tolerance', () => {
        expect(sut(request({ 'stripe-signature': header }), SIGNED_AT + 612)).toEqual({
          status: 'failed',
          reason: 'timestamp is 612 s old (tolerance 300 s)',
        });
        expect(sut(request({ 'stripe-signature': header }), SIGNED_AT - 301).reason).toBe(
          'timestamp is 301 s in the future (tolerance 300 s)',
        );
        const lenient = { ...rule, tolerance_seconds: 700 };
        expect(
          verifySignature(lenient, request({ 'stripe-signature': header }), (SIGNED_AT + 612) * 1000),
        ).toEqual(VERIFIED);
      });
    });

    describe('github', () => {
      const secret = "It's a Secret to Everybody";
      const rule: VerificationRule = { provider: 'github', secret, mode };
      const sut = (req: SignedRequest) => verifySignature(rule, req);
      let signature: string;
      beforeAll(async () => {
        signature = await signGithub(secret, JSON_BODY);
      });

      it('verifies a signature made by @octokit/webhooks-methods', () => {
        expect(sut(request({ 'x-hub-signature-256': signature }))).toEqual(VERIFIED);
      });

      it('fails a wrong secret and a tampered body', async () => {
        const other = await signGithub('another secret', JSON_BODY);
        expect(sut(request({ 'x-hub-signature-256': other }))).toEqual(NO_MATCH);
        expect(sut(request({ 'x-hub-signature-256': signature }, `${JSON_BODY} `))).toEqual(NO_MATCH);
      });

      it('fails a missing header or one without the sha256= prefix', () => {
        expect(sut(request({ 'x-hub-signature': signature })).reason).toBe(
          'missing the X-Hub-Signature-256 header',
        );
        expect(sut(request({ 'x-hub-signature-256': signature.slice(7) })).reason).toBe(
          'the X-Hub-Signature-256 header does not start with "sha256="',
        );
      });
    });

    describe('shopify', () => {
      const body = '{"id":820982911946154508,"email":"jon@doe.ca"}';
      const valid = 'ydL79GgFis+45WlpB77OS7dfcX+8t6iObguHVHAAEPc='; // openssl, key shpss_test_secret
      const rule: VerificationRule = { provider: 'shopify', secret: 'shpss_test_secret', mode };
      const sut = (req: SignedRequest, r = rule) => verifySignature(r, req);

      it('verifies a known-good base64 signature', () => {
        expect(sut(request({ 'x-shopify-hmac-sha256': valid }, body))).toEqual(VERIFIED);
      });

      it('fails a wrong secret, a tampered body and a missing header', () => {
        expect(sut(request({ 'x-shopify-hmac-sha256': valid }, body), { ...rule, secret: 'other' })).toEqual(
          NO_MATCH,
        );
        expect(sut(request({ 'x-shopify-hmac-sha256': valid }, body.replace('jon', 'jan')))).toEqual(
          NO_MATCH,
        );
        expect(sut(request({}, body)).reason).toBe('missing the X-Shopify-Hmac-Sha256 header');
      });

      it('fails a signature of the wrong length without throwing', () => {
        expect(sut(request({ 'x-shopify-hmac-sha256': valid.slice(0, 20) }, body))).toEqual(NO_MATCH);
      });
    });

    describe('slack', () => {
      const timestamp = 1531420618;
      const body = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fwebbot&text=hello';
      // openssl, key 8f742231b10e8888abcd99yyyzzz85a5, over `v0:1531420618:<body>`
      const valid = 'v0=188fb2d5156b9f50444ed3a3ca8e68fc4d207adfbe98fcbdb145cb5b67479aec';
      const rule: VerificationRule = { provider: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5', mode };
      const headers = { 'x-slack-signature': valid, 'x-slack-request-timestamp': String(timestamp) };
      const sut = (req: SignedRequest, nowSeconds = timestamp + 5, r = rule) =>
        verifySignature(r, req, nowSeconds * 1000);

      it('verifies a known-good signature', () => {
        expect(sut(request(headers, body))).toEqual(VERIFIED);
      });

      it('fails a wrong secret, a tampered body and a tampered timestamp', () => {
        expect(sut(request(headers, body), undefined, { ...rule, secret: 'other' })).toEqual(NO_MATCH);
        expect(sut(request(headers, `${body}&admin=1`))).toEqual(NO_MATCH);
        expect(
          sut(request({ ...headers, 'x-slack-request-timestamp': String(timestamp + 1) }, body)),
        ).toEqual(NO_MATCH);
      });

      it('fails missing or malformed headers', () => {
        expect(sut(request({ 'x-slack-signature': valid }, body)).reason).toBe(
          'missing the X-Slack-Request-Timestamp header',
        );
        expect(sut(request({ 'x-slack-request-timestamp': String(timestamp) }, body)).reason).toBe(
          'missing the X-Slack-Signature header',
        );
        expect(sut(request({ ...headers, 'x-slack-request-timestamp': '15314206.18' }, body)).reason).toBe(
          'malformed X-Slack-Request-Timestamp header',
        );
        expect(sut(request({ ...headers, 'x-slack-signature': valid.slice(3) }, body)).reason).toBe(
          'the X-Slack-Signature header does not start with "v0="',
        );
      });

      it('fails an old or a future timestamp beyond the tolerance', () => {
        expect(sut(request(headers, body), timestamp + 301).reason).toBe(
          'timestamp is 301 s old (tolerance 300 s)',
        );
        expect(sut(request(headers, body), timestamp - 400).reason).toBe(
          'timestamp is 400 s in the future (tolerance 300 s)',
        );
      });
    });

    describe('standard_webhooks', () => {
      const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
      const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
      const rule: VerificationRule = { provider: 'standard_webhooks', secret, mode };
      const signature = new Webhook(secret).sign(id, new Date(SIGNED_AT * 1000), JSON_BODY);
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(SIGNED_AT),
        'webhook-signature': signature,
      };
      const sut = (req: SignedRequest, nowSeconds = SIGNED_AT, r = rule) =>
        verifySignature(r, req, nowSeconds * 1000);

      it('verifies a signature made by the standardwebhooks package, with or without the whsec_ prefix', () => {
        expect(sut(request(headers))).toEqual(VERIFIED);
        expect(sut(request(headers), undefined, { ...rule, secret: secret.slice(6) })).toEqual(VERIFIED);
      });

      it('verifies when any v1 signature in the list matches, ignoring other versions', () => {
        const list = `v1a,${signature.slice(3)} v1,${'A'.repeat(44)} ${signature}`;
        expect(sut(request({ ...headers, 'webhook-signature': list }))).toEqual(VERIFIED);
        expect(sut(request({ ...headers, 'webhook-signature': `v2,${signature.slice(3)}` })).reason).toBe(
          'the webhook-signature header has no v1 signature',
        );
      });

      it('fails a wrong secret, a tampered body and a tampered message id', () => {
        const other = new Webhook('whsec_b3RoZXIgc2VjcmV0').sign(id, new Date(SIGNED_AT * 1000), JSON_BODY);
        expect(sut(request({ ...headers, 'webhook-signature': other }))).toEqual(NO_MATCH);
        expect(sut(request(headers, JSON_BODY.toUpperCase()))).toEqual(NO_MATCH);
        expect(sut(request({ ...headers, 'webhook-id': 'msg_other' }))).toEqual(NO_MATCH);
      });

      it('fails a missing header', () => {
        for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
          expect(sut(request({ ...headers, [name]: undefined })).reason).toBe(`missing the ${name} header`);
        }
      });

      it('fails an old or a future timestamp beyond the tolerance, and honours a custom tolerance', () => {
        expect(sut(request(headers), SIGNED_AT + 612).reason).toBe(
          'timestamp is 612 s old (tolerance 300 s)',
        );
        expect(sut(request(headers), SIGNED_AT - 612).reason).toBe(
          'timestamp is 612 s in the future (tolerance 300 s)',
        );
        expect(sut(request(headers), SIGNED_AT - 612, { ...rule, tolerance_seconds: 900 })).toEqual(VERIFIED);
      });
    });

    describe('hmac', () => {
      const secret = 'hmac-secret';
      const body = '{"event":"order.paid","id":42}';
      // openssl, key hmac-secret
      const sha256Hex = '4757c70a45e1609989ed5a7b17c19b03ff8fc9c587795a9fad42d51e9b111033';
      const sha512Base64 =
        'C7FByKq9NgPNlWcAYev9yGF/Seozw2ZjwFKKo12JLGqcFh7IDeRme4KyTI6eTZyz4ninZou1GBgTpwbHm2yvVQ==';
      const sha1Hex = 'c4f1474ab8bf8d5d85f710704898ee1f53d10899';
      const rule: VerificationRule = { provider: 'hmac', secret, mode, header: 'X-Signature' };
      const sut = (req: SignedRequest, r: Partial<VerificationRule> = {}) =>
        verifySignature({ ...rule, ...r }, req);

      it('verifies sha256 hex by default, case-insensitively, with the header named in any case', () => {
        expect(sut(request({ 'x-signature': sha256Hex }, body))).toEqual(VERIFIED);
        expect(sut(request({ 'x-signature': sha256Hex.toUpperCase() }, body))).toEqual(VERIFIED);
        expect(sut(request({ 'x-signature': sha256Hex }, body), { header: 'x-SIGNATURE' })).toEqual(VERIFIED);
      });

      it('verifies the configured algorithm, encoding and prefix', () => {
        const sha512 = { algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=' } as const;
        expect(sut(request({ 'x-signature': `sha512=${sha512Base64}` }, body), sha512)).toEqual(VERIFIED);
        expect(sut(request({ 'x-signature': sha1Hex }, body), { algorithm: 'sha1' })).toEqual(VERIFIED);
        expect(sut(request({ 'x-signature': sha512Base64 }, body), sha512).reason).toBe(
          'the X-Signature header does not start with "sha512="',
        );
      });

      it('verifies a non-UTF-8 binary body byte for byte', () => {
        const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]);
        const signature = 'dd541b190dee08e6a116cc998e01e96c696acc4ec77a13ba3f7ebc3cc479324f'; // openssl
        expect(sut(request({ 'x-signature': signature }, binary))).toEqual(VERIFIED);
        // The same text once decoded (both bytes become U+FFFD), but other bytes.
        const other = Buffer.from([0xfe, 0xfe, 0x00, 0x80, 0xc3, 0x28]);
        expect(other.toString()).toBe(binary.toString());
        expect(sut(request({ 'x-signature': signature }, other))).toEqual(NO_MATCH);
      });

      it('fails a wrong secret, a tampered body and a missing header', () => {
        expect(sut(request({ 'x-signature': sha256Hex }, body), { secret: 'other' })).toEqual(NO_MATCH);
        expect(sut(request({ 'x-signature': sha256Hex }, body.replace('42', '43')))).toEqual(NO_MATCH);
        expect(sut(request({}, body)).reason).toBe('missing the X-Signature header');
      });

      it('fails, without throwing or quoting the secret, a rule that cannot be checked', () => {
        expect(sut(request({ 'x-signature': sha256Hex }, body), { header: undefined }).reason).toBe(
          'no header name is set for this HMAC verification',
        );
        const badAlgorithm = { algorithm: 'md6' as VerificationRule['algorithm'] };
        const result = sut(request({ 'x-signature': sha256Hex }, body), badAlgorithm);
        expect(result).toEqual({
          status: 'failed',
          reason: expect.stringMatching(/^the signature could not be checked/),
        });
        expect(result.reason).not.toContain(secret);
        expect(sut(request({ 'x-signature': sha256Hex }, body), { secret: '' }).reason).toBe(
          'no secret is set for this verification',
        );
      });
    });
  });
});
