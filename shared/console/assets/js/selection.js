// Which tasks of a list are selected: some of the page's (by id, with their latest status), or
// "all that match this filter" (every task the list's filter matches, on any page). Whoever
// shows the selection subscribes to its changes.

export class Selection {
  constructor() {
    this.tasks = new Map();
    this.allMatching = false;
    this.listeners = [];
  }

  onChange(listener) {
    this.listeners.push(listener);
  }

  changed() {
    for (const listener of this.listeners) listener(this);
  }

  has(id) {
    return this.allMatching || this.tasks.has(id);
  }

  /** Select or unselect one task of the page (which leaves "all that match"). */
  set(task, selected) {
    this.allMatching = false;
    if (selected) this.tasks.set(task.id, task);
    else this.tasks.delete(task.id);
    this.changed();
  }

  /** Select or unselect every task of the page. */
  setPage(tasks, selected) {
    this.allMatching = false;
    for (const task of tasks) {
      if (selected) this.tasks.set(task.id, task);
      else this.tasks.delete(task.id);
    }
    this.changed();
  }

  selectAllMatching() {
    this.allMatching = true;
    this.changed();
  }

  clear() {
    this.tasks.clear();
    this.allMatching = false;
    this.changed();
  }

  /** A new listing of the page: selected tasks take their latest status; gone ones drop out. */
  refresh(tasks) {
    const listed = new Map(tasks.map((t) => [t.id, t]));
    for (const id of [...this.tasks.keys()]) {
      if (listed.has(id)) this.tasks.set(id, listed.get(id));
      else this.tasks.delete(id);
    }
    this.changed();
  }

  get selected() {
    return [...this.tasks.values()];
  }
}
