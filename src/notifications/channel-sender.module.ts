import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { createHttpDispatcher, DeliverySender } from '../outbound/delivery-sender';
import { MailTransportModule } from '../outbound/mail-transport.module';
import { CHANNEL_HTTP, ChannelSender } from './channel-sender.service';

/** Sending to a channel, for the worker's jobs and the API's "send a test". */
@Module({
  imports: [MailTransportModule],
  providers: [
    {
      provide: CHANNEL_HTTP,
      inject: [ConfigService],
      // Its own keep-alive pools, refusing private networks as destinations do (unless allowed).
      useFactory: (config: ConfigService<Environment, true>) =>
        new DeliverySender(
          createHttpDispatcher(config.get('DELIVERY_ALLOW_PRIVATE_NETWORKS', { infer: true })),
          config,
        ),
    },
    ChannelSender,
  ],
  exports: [ChannelSender],
})
export class ChannelSenderModule {}
