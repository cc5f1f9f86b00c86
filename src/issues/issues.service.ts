import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerException, type ThrottlerStorage } from '@nestjs/throttler';
import { AI_RATE_LIMIT_PER_MIN } from '../ai/ai.types';
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
 * New diagnoses the issue route asks the AI engine for, per user and minute: the AI routes' limit, counted
 * apart from theirs (a cached diagnosis costs nothing and is always shown).
 */
const NEW_DIAGNOSES_PER_MINUTE = AI_RATE_LIMIT_PER_MIN;
const MINUTE_MS = 60_000;

const notReopened = () =>
  new ConflictException('a resolved issue is not reopened: the next failure of its kind opens a new issue');

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
    @InjectThrottlerStorage() private readonly throttlerStorage: ThrottlerStorage,
  ) {}

  async list(userId: string, query: ListIssuesQueryDto): Promise<IssueDto[]> {
    const issues = await this.issues.listReadable(userId, {
      status: query.status,
      endpointId: query.endpoint_id?.toLowerCase(),
    });
    return issues.map(toIssueDto);
  }

  /**
   * `grant`: the caller's on the issue, whose plan (the endpoint's account's) decides the diagnosis; a new
   * diagnosis counts against the caller's limit (`callerId`).
   */
  async get(grant: Grant, callerId: string, id: string): Promise<IssueDetailDto> {
    const issue = await this.find(id);
    return { ...toIssueDto(issue), diagnosis: await this.diagnosis(grant.plan, callerId, issue) };
  }

  /**
   * `acknowledged`, `open` again, or `resolved`; a resolved issue is not reopened (409), also when a
   * delivery resolved it between the look and the write (which then changed nothing).
   */
  async setStatus(id: string, status: IssueStatus): Promise<IssueDto> {
    const reopening = (issue: Issue) => issue.status === 'resolved' && status !== 'resolved';
    if (reopening(await this.find(id))) throw notReopened();
    const changed = await this.issues.setStatus(id, status);
    if (!changed) throw new NotFoundException(NOT_FOUND.issue);
    if (reopening(changed)) throw notReopened();
    return toIssueDto(changed);
  }

  private async find(id: string): Promise<Issue> {
    const issue = await this.issues.find(id);
    if (!issue) throw new NotFoundException(NOT_FOUND.issue);
    return issue;
  }

  /**
   * The AI engine's diagnosis of the latest failed delivery (the same one, cached the same way, as the
   * event's diagnose route), for plans from starter; null below, when the event is gone, when the caller
   * has asked for NEW_DIAGNOSES_PER_MINUTE new ones in the last minute, or should the engine fail (the
   * issue is still worth showing).
   */
  private async diagnosis(plan: Plan, callerId: string, issue: Issue): Promise<DiagnosisDto | null> {
    if (!planAtLeast(plan, DIAGNOSIS_PLAN) || !issue.lastEventId) return null;
    try {
      const answer = await this.ai.diagnose(issue.endpointId, issue.lastEventId, () =>
        this.mayDiagnose(callerId),
      );
      return { diagnosis: answer.text, provider: answer.provider };
    } catch (error) {
      if (!(error instanceof NotFoundException || error instanceof ThrottlerException))
        this.logger.warn({ issueId: issue.id, err: error }, 'no diagnosis for the issue');
      return null;
    }
  }

  /** Counts a new diagnosis against the caller's limit (in the throttler's storage, shared by processes). */
  private async mayDiagnose(callerId: string): Promise<boolean> {
    const { isBlocked } = await this.throttlerStorage.increment(
      `issue-diagnoses:user:${callerId}`,
      MINUTE_MS,
      NEW_DIAGNOSES_PER_MINUTE,
      MINUTE_MS,
      'issue-diagnoses',
    );
    return !isBlocked;
  }
}
