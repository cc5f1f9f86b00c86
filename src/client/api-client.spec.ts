import { ApiError } from './api-client';

const answer = (status: number, message: string) =>
  new Response(JSON.stringify({ statusCode: status, error: 'Not Found', message }), { status });

describe(ApiError.name, () => {
  it("describes an answer with its status and the API's message", async () => {
    expect((await ApiError.from(answer(404, 'event not found'))).message).toBe('404 event not found');
  });

  it('points an endpoint not found at the list of endpoints', async () => {
    expect((await ApiError.from(answer(404, 'endpoint not found'))).message).toBe(
      '404 endpoint not found (see hooktrail endpoints list)',
    );
  });
});
