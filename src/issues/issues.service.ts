import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { AiService } from '../ai/ai.service';
import type { DiagnosisDto } from '../ai/dto/ai.dto';
import { PLANS, type Plan } from '../common/plans';
import type { IssueDetailDto, IssueDto } from './dto/issue.dto';
import type { ListIssuesQueryDto } from './dto/list-issues.query';
import type { Issue, IssueStatus } from './issue';
import { toIssueDto } from './issue.presenter';
import { IssuesRepository } from './issues.repository';

const ISSUE_NOT_FOUND = 'issue not found';
/** The plan from which an issue shows the AI's diagnosis of its latest failure. */
const DIAGNOSIS_PLAN: Plan = 'starter';

/** A user's issues: read them, with a diagnosis on the paid plans, and acknowledge or resolve them by hand. */
@Injectable()
export class IssuesService {
  private readonly logger = new Logger(IssuesService.name);

  constructor(
    private readonly issues: IssuesRepository,
    private readonly ai: AiService,
  ) {}

  async list(userId: string, query: ListIssuesQueryDto): Promise<IssueDto[]> {
    const issues = await this.issues.listOwned(userId, {
      status: query.status,
      endpointId: query.endpoint_id?.toLowerCase(),
    });
    return issues.map(toIssueDto);
  }

  async get(userId: string, id: string): Promise<IssueDetailDto> {
    const issue = await this.findOwned(userId, id);
    return { ...toIssueDto(issue), diagnosis: await this.diagnosis(userId, issue) };
  }

  /** `acknowledged`, `open` again, or `resolved`; a resolved issue is not reopened (409). */
  async setStatus(userId: string, id: string, status: IssueStatus): Promise<IssueDto> {
    const issue = await this.findOwned(userId, id);
    if (issue.status === 'resolved' && status !== 'resolved')
      throw new ConflictException(
        'a resolved issue is not reopened: the next failure of its kind opens a new issue',
      );
    const changed = await this.issues.setStatus(userId, id, status);
    if (!changed) throw new NotFoundException(ISSUE_NOT_FOUND);
    return toIssueDto(changed);
  }

  private async findOwned(userId: string, id: string): Promise<Issue> {
    const issue = await this.issues.findOwned(userId, id);
    if (!issue) throw new NotFoundException(ISSUE_NOT_FOUND);
    return issue;
  }

  /**
   * The AI engine's diagnosis of the latest failed delivery (the same one, cached the same way, as the
   * event's diagnose route), for plans from starter; null below, when the event is gone, or should the
   * engine fail (the issue is still worth showing).
   */
  private async diagnosis(userId: string, issue: Issue): Promise<DiagnosisDto | null> {
    const plan = await this.issues.planOf(userId);
    if (!plan || PLANS.indexOf(plan) < PLANS.indexOf(DIAGNOSIS_PLAN) || !issue.lastEventId) return null;
    try {
      const answer = await this.ai.diagnose(userId, issue.endpointId, issue.lastEventId);
      return { diagnosis: answer.text, provider: answer.provider };
    } catch (error) {
      if (!(error instanceof NotFoundException))
        this.logger.warn({ issueId: issue.id, err: error }, 'no diagnosis for the issue');
      return null;
    }
  }
}
