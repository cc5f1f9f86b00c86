import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Values the service makes once and shares between its processes (the generated JWT secret). */
@Entity({ tableName: 'app_settings' })
export class AppSetting {
  @PrimaryKey({ type: 'text' })
  key!: string;

  @Property({ type: 'text' })
  value!: string;
}
