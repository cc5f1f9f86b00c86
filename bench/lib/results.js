// What a run reports, filled by every scenario and printed by bench/run.js: the table's rows (addRow), the
// notes under it, and the ledger of captures acknowledged and errors seen (scenarios/ledger.js checks it
// against the service's database and the sink at the end).

const rows = [];
const notes = [];
const ledger = { acknowledged: 0, serviceErrors: 0, inFlightAtStop: 0, seededDestinations: [] };

function addRow(scenario, figure, value, target, ok = null) {
  rows.push({ scenario, figure, value, target, ok });
}

module.exports = { rows, notes, ledger, addRow };
