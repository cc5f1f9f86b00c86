import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { isAbortError } from '../api/errors';
import { endpointStats } from '../api/stats';
import { plural } from '../format';
import {
  formatMs,
  formatRate,
  type StackedSeries,
  stackStatuses,
  STATUS_LAYERS,
  statusTotals,
  WINDOW_TEXT,
} from '../stats-series';
import { type EndpointStats, STATS_WINDOWS, type StatsWindow } from '../types';
import { Alert } from './Alert';

const CHART_HEIGHT = 220;
/** The statistics are loaded again this often while shown (besides after live changes). */
const REFRESH_MS = 60_000;

interface Props {
  endpointId: string;
  /** Changes when the live stream saw events captured or delivered: the figures are loaded again. */
  liveTick: number;
}

/** The endpoint's events per bucket stacked by status, and each destination's success rate and latency. */
export function EndpointStatsCard({ endpointId, liveTick }: Props) {
  const [period, setPeriod] = useState<StatsWindow>('24h');
  const [stats, setStats] = useState<EndpointStats | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const controller = new AbortController();
    endpointStats(endpointId, period, controller.signal).then(
      (loaded) => {
        setStats(loaded);
        setError(null);
      },
      (err) => {
        if (!isAbortError(err)) setError(err);
      },
    );
    return () => controller.abort();
  }, [endpointId, period, liveTick, tick]);

  const shown = stats?.window === period ? stats : null;
  return (
    <section class="card stats" aria-labelledby="stats-heading" data-testid="endpoint-stats">
      <div class="card-head">
        <h2 id="stats-heading">Statistics</h2>
        <div class="window-choice" role="group" aria-label="Period">
          {STATS_WINDOWS.map((option) => (
            <button
              key={option}
              type="button"
              class="btn btn-small"
              data-testid={`stats-window-${option}`}
              aria-pressed={option === period}
              title={WINDOW_TEXT[option]}
              onClick={() => setPeriod(option)}
            >
              {option}
            </button>
          ))}
        </div>
      </div>
      <Alert error={error} />
      {!shown && !error && (
        <p class="muted" aria-busy="true">
          Loading statistics…
        </p>
      )}
      {shown && (
        <>
          <EventsChart stats={shown} />
          <DestinationTable stats={shown} />
        </>
      )}
    </section>
  );
}

function EventsChart({ stats }: { stats: EndpointStats }) {
  const host = useRef<HTMLDivElement>(null);
  const series = stackStatuses(stats.buckets);
  const totals = statusTotals(stats.buckets);
  const summary = `${WINDOW_TEXT[stats.window]}: ${plural(series.total, 'event')}, ${STATUS_LAYERS.map(
    ({ status, label }) => `${totals[status]} ${label.toLowerCase()}`,
  ).join(', ')}.`;

  useEffect(() => {
    const node = host.current;
    if (!node) return;
    const chart = new uPlot(chartOptions(series, node.clientWidth), chartData(series), node);
    const resize = new ResizeObserver(() => chart.setSize({ width: node.clientWidth, height: CHART_HEIGHT }));
    resize.observe(node);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
    // Drawn anew for each answer: a few dozen points, cheaper than keeping a chart in step.
  }, [stats]);

  return (
    <figure class="stats-chart">
      <figcaption class="small" data-testid="stats-summary">
        {summary}
      </figcaption>
      <div ref={host} class="chart-host" data-testid="stats-events-chart" role="img" aria-label={summary} />
    </figure>
  );
}

function chartData(series: StackedSeries): uPlot.AlignedData {
  return [series.xs, ...series.layers.map((layer) => layer.tops)];
}

function chartOptions(series: StackedSeries, width: number): uPlot.Options {
  const bars = uPlot.paths.bars?.({ size: [0.8, 48], gap: 1 });
  return {
    width: Math.max(width, 200),
    height: CHART_HEIGHT,
    scales: { x: { time: true }, y: { range: (_chart, _min, max) => [0, Math.max(4, max * 1.1)] } },
    axes: [
      {},
      { size: 48, values: (_chart, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? tick : '')) },
    ],
    cursor: { drag: { x: false, y: false } },
    series: [
      {},
      ...series.layers.map((layer) => ({
        label: layer.label,
        stroke: layer.color,
        fill: layer.color,
        // No outline: an empty bucket shows nothing rather than a line at zero.
        width: 0,
        paths: bars,
        points: { show: false },
        // The legend says this layer's own count (over the window until a bucket is hovered), not where
        // its bar ends.
        value: (_chart: uPlot, _top: number, _series: number, index: number | null) =>
          String(index === null ? layer.counts.reduce((sum, n) => sum + n, 0) : layer.counts[index]),
      })),
    ],
  };
}

function DestinationTable({ stats }: { stats: EndpointStats }) {
  if (stats.destinations.length === 0) {
    return <p class="muted small">No destinations: events are stored but not forwarded.</p>;
  }
  return (
    <div class="table-wrap">
      <table class="stats-destinations" data-testid="stats-destinations">
        <caption class="sr-only">Delivery attempts per destination, {WINDOW_TEXT[stats.window]}</caption>
        <thead>
          <tr>
            <th scope="col">Destination</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col" class="num">
              Success
            </th>
            <th scope="col" class="num">
              p50
            </th>
            <th scope="col" class="num">
              p95
            </th>
          </tr>
        </thead>
        <tbody>
          {stats.destinations.map((destination) => (
            <tr key={destination.id} data-testid="stats-destination-row" data-destination-id={destination.id}>
              <th scope="row">
                <code class="url">{destination.url}</code>
              </th>
              <td class="num" data-testid="stats-attempts">
                {destination.attempts}
              </td>
              <td class="num" data-testid="stats-success-rate">
                <RateBar rate={destination.success_rate} />
              </td>
              <td class="num">{formatMs(destination.p50_ms)}</td>
              <td class="num">{formatMs(destination.p95_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A success rate as a number and a small bar (green part succeeded). */
function RateBar({ rate }: { rate: number | null }) {
  if (rate === null) return <span class="muted">—</span>;
  return (
    <span class="rate">
      <span class="rate-bar" aria-hidden="true">
        <span style={{ width: `${Math.round(rate * 100)}%` }} />
      </span>
      {formatRate(rate)}
    </span>
  );
}
