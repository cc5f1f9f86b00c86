import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { AiService } from '../ai/ai.service';
import type { DiagnosisDto } from '../ai/dto/ai.dto';
import type { Grant } from '../access/access.repository';
import { NOT_FOUND } from '../access/access.service';
import { type Plan, planAtLeast } from '../common/plans';
import type { IssueDetailDto, IssueDto } from './dto/issue.dto';
import type { ListIssuesQueryDto } from './dto/list-issues.query';
import type { Issue, IssueStatus } from './issue';
import { toIssueDto } from './issue.presenter';
import { IssuesRepository } from './issues.repository';

/** The plan from which an issue shows the AI's diagnosis of its latest failure. */
const DIAGNOSIS_PLAN: Plan = 'starter';

/**
 * Issues of the endpoints a user may read: read them, with a diagnosis on the paid plans, and acknowledge or
 * resolve them by hand.
 */
@Injectable()
export class IssuesService {
  private readonly logger = new Logger(IssuesService.name);

  constructor(
    private readonly issues: IssuesRepository,
    private readonly ai: AiService,
  ) {}

  async list(userId: string, query: ListIssuesQueryDto): Promise<IssueDto[]> {
    const issues = await this.issues.listReadable(userId, {
      status: query.status,
      endpointId: query.endpoint_id?.toLowerCase(),
    });
    return issues.map(toIssueDto);
  }

  /** `grant`: the caller's on the issue, whose plan (the endpoint's account's) decides the diagnosis. */
  async get(grant: Grant, id: string): Promise<IssueDetailDto> {
    const issue = await this.find(id);
    return { ...toIssueDto(issue), diagnosis: await this.diagnosis(grant.plan, issue) };
  }

  /** `acknowledged`, `open` again, or `resolved`; a resolved issue is not reopened (409). */
  async setStatus(id: string, status: IssueStatus): Promise<IssueDto> {
    const issue = await this.find(id);
    if (issue.status === 'resolved' && status !== 'resolved')
      throw new ConflictException(
        'a resolved issue is not reopened: the next failure of its kind opens a new issue',
      );
    const changed = await this.issues.setStatus(id, status);
    if (!changed) throw new NotFoundException(NOT_FOUND.issue);
    return toIssueDto(changed);
  }

  private async find(id: string): Promise<Issue> {
    const issue = await this.issues.find(id);
    if (!issue) throw new NotFoundException(NOT_FOUND.issue);
    return issue;
  }

  /**
   * The AI engine's diagnosis of the latest failed delivery (the same one, cached the same way, as the
   * event's diagnose route), for plans from starter; null below, when the event is gone, or should the
   * engine fail (the issue is still worth showing).
   */
  private async diagnosis(plan: Plan, issue: Issue): Promise<DiagnosisDto | null> {
    if (!planAtLeast(plan, DIAGNOSIS_PLAN) || !issue.lastEventId) return null;
    try {
      const answer = await this.ai.diagnose(issue.endpointId, issue.lastEventId);
      return { diagnosis: answer.text, provider: answer.provider };
    } catch (error) {
      if (!(error instanceof NotFoundException))
        this.logger.warn({ issueId: issue.id, err: error }, 'no diagnosis for the issue');
      return null;
    }
  }
}
