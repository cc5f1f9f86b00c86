import { ApiProperty } from '@nestjs/swagger';
import {
  IsIn,
  Validate,
  ValidateIf,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
  type ValidationArguments,
} from 'class-validator';
import { HANDLER_FRAMEWORKS, type HandlerFramework, type HandlerLanguage } from '../ai.types';

const LANGUAGES = Object.keys(HANDLER_FRAMEWORKS) as HandlerLanguage[];
const FRAMEWORKS = [...new Set(Object.values(HANDLER_FRAMEWORKS).flat())] as HandlerFramework[];
const PAIRS = LANGUAGES.map((language) => `${language}: ${HANDLER_FRAMEWORKS[language].join(', ')}`).join(
  '; ',
);

/** Omitted means the default; null is not a value (as in every other DTO). */
const sent = (_dto: unknown, value: unknown) => value !== undefined;

@ValidatorConstraint({ name: 'frameworkFitsLanguage' })
class FrameworkFitsLanguage implements ValidatorConstraintInterface {
  validate(framework: string, args: ValidationArguments): boolean {
    const language = ((args.object as HandlerRequestDto).language ?? 'typescript') as HandlerLanguage;
    // Own keys only: a language such as "constructor" would find an inherited property of the object.
    const allowed: readonly string[] = Object.hasOwn(HANDLER_FRAMEWORKS, language)
      ? HANDLER_FRAMEWORKS[language]
      : [];
    return allowed.includes(framework);
  }

  defaultMessage(args: ValidationArguments): string {
    const language = (args.object as HandlerRequestDto).language ?? 'typescript';
    return `framework ${String(args.value)} does not go with language ${language}; allowed pairs: ${PAIRS}`;
  }
}

export class HandlerRequestDto {
  /** Defaults to typescript. */
  @ApiProperty({ enum: LANGUAGES, required: false, default: 'typescript' })
  @ValidateIf(sent)
  @IsIn(LANGUAGES, { message: `language must be one of ${LANGUAGES.join(', ')} (allowed pairs: ${PAIRS})` })
  language?: HandlerLanguage;

  /** Defaults to express for typescript and javascript, fastapi for python, gin for go. */
  @ApiProperty({ enum: FRAMEWORKS, required: false })
  @ValidateIf(sent)
  @IsIn(FRAMEWORKS, {
    message: `framework must be one of ${FRAMEWORKS.join(', ')} (allowed pairs: ${PAIRS})`,
  })
  @Validate(FrameworkFitsLanguage)
  framework?: HandlerFramework;
}

export class ExplanationDto {
  explanation!: string;
  @ApiProperty({ enum: ['gemini', 'local'] })
  provider!: 'gemini' | 'local';
}

export class SchemaDto {
  /** TypeScript interfaces, raw text without markdown fences. */
  schema!: string;
  @ApiProperty({ enum: ['gemini', 'local'] })
  provider!: 'gemini' | 'local';
}

export class HandlerDto {
  /** Complete handler code, raw text without markdown fences. */
  handler!: string;
  @ApiProperty({ enum: ['gemini', 'local'] })
  provider!: 'gemini' | 'local';
}

export class DiagnosisDto {
  diagnosis!: string;
  @ApiProperty({ enum: ['gemini', 'local'] })
  provider!: 'gemini' | 'local';
}
