import { Kafka, logLevel as KafkaLogLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

export interface KafkaClientOptions {
  clientId?: string;
  /** kafkajs's own log lines go here; without it, warnings and errors go to stderr (never stdout, which `--json` owns). */
  log?: Logger;
}

function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _timestamp, logger: _logger, ...extra } = entry;
      const fields = { kafkajs: namespace, ...extra };
      if (level === KafkaLogLevel.ERROR) log.error(fields, message);
      else if (level === KafkaLogLevel.WARN) log.warn(fields, message);
      else if (level === KafkaLogLevel.INFO) log.info(fields, message);
      else log.trace(fields, message);
    };
}

const stderrLogCreator: logCreator =
  () =>
  ({ namespace, level, log: entry }) => {
    // Connection repeats what BrokerPool says about the same attempt.
    if (level > KafkaLogLevel.WARN || namespace === 'Connection') return;
    process.stderr.write(
      `kafka ${level === KafkaLogLevel.ERROR ? 'error' : 'warning'} [${namespace}]: ${entry.message}\n`,
    );
  };

export function createKafka(brokers: readonly string[], options: KafkaClientOptions = {}): Kafka {
  if (brokers.length === 0)
    throw new Error('no Kafka broker given: set KAFKA_BROKERS (comma-separated host:port)');
  return new Kafka({
    clientId: options.clientId ?? 'earshot',
    brokers: [...brokers],
    logLevel: KafkaLogLevel.INFO,
    logCreator: options.log ? pinoLogCreator(options.log) : stderrLogCreator,
  });
}
