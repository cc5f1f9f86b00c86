import { ConflictException } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { AiService } from '../ai/ai.service';
import type { Issue, IssueStatus } from './issue';
import type { IssuesRepository } from './issues.repository';
import { IssuesService } from './issues.service';

const issue = (status: IssueStatus): Issue => ({
  id: '6f0c3c1e-8a4f-4b7e-9a51-0d7f2d9c1a11',
  endpointId: '0b6f2e0a-3c7d-4f55-8d2e-6a1b9c4d7e21',
  destination: { id: '5d2a7c3b-1e9f-4a60-b8d4-2c7e9f1a3b51', url: 'https://api.example.com/hooks' },
  kind: 'http_5xx',
  summary: 'HTTP 500',
  status,
  failureCount: 3,
  firstSeenAt: new Date('2026-12-02T10:00:00Z'),
  lastSeenAt: new Date('2026-12-02T10:05:00Z'),
  lastEventId: null,
  resolvedAt: status === 'resolved' ? new Date('2026-12-02T10:06:00Z') : null,
});

/** The service on a repository that reads `before` and, after its write, `after`. */
function serviceReading(before: IssueStatus, after: IssueStatus) {
  const repository = {
    find: jest.fn().mockResolvedValue(issue(before)),
    setStatus: jest.fn().mockResolvedValue(issue(after)),
  };
  const service = new IssuesService(
    repository as unknown as IssuesRepository,
    {} as AiService,
    {} as ThrottlerStorage,
  );
  return { service, repository };
}

describe('IssuesService.setStatus', () => {
  it('acknowledges an open issue', async () => {
    const { service } = serviceReading('open', 'acknowledged');
    await expect(service.setStatus(issue('open').id, 'acknowledged')).resolves.toMatchObject({
      status: 'acknowledged',
    });
  });

  it('refuses to reopen a resolved issue, writing nothing', async () => {
    const { service, repository } = serviceReading('resolved', 'resolved');
    await expect(service.setStatus(issue('open').id, 'open')).rejects.toThrow(ConflictException);
    expect(repository.setStatus).not.toHaveBeenCalled();
  });

  it('answers 409 when a delivery resolved the issue between the look and the write', async () => {
    const { service } = serviceReading('open', 'resolved');
    await expect(service.setStatus(issue('open').id, 'acknowledged')).rejects.toThrow(ConflictException);
  });
});
