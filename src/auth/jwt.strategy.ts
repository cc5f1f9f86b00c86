import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import type { Plan } from '../common/plans';
import { JWT_SECRET } from './jwt-secret.provider';

export interface AccessTokenClaims {
  sub: string;
  email: string;
  plan: Plan;
  typ: 'access';
}

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) {
  constructor(@Inject(JWT_SECRET) secret: string) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: secret,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  validate(claims: AccessTokenClaims): AuthUser | false {
    if (claims.typ !== 'access' || typeof claims.sub !== 'string') return false;
    return { id: claims.sub, email: claims.email, plan: claims.plan };
  }
}
