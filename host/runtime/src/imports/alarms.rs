//! `wasmkeep:actor/alarms`: the actor's one alarm.

use super::HostState;
use super::R;
use crate::actor_db::META_ALARM;
use crate::bindings::alarms;

impl alarms::Host for HostState {
    fn get_alarm(&mut self) -> R<Option<u64>> {
        Ok(self.actor.open_db().and(self.alarm))
    }

    fn set_alarm(&mut self, at: u64) -> R<()> {
        if let Some(db) = self.actor.open_db() {
            match db.meta_set(META_ALARM, Some(&at.to_string())) {
                Ok(()) => {
                    self.alarm = Some(at);
                    if let Err(e) = self.alarms.set(&self.key, at) {
                        tracing::error!(actor = %self.key, "alarm index: {e}");
                    }
                    self.node.alarm_set();
                }
                Err(e) => tracing::error!(actor = %self.key, "set-alarm: {e}"),
            }
        }
        Ok(())
    }

    fn clear_alarm(&mut self) -> R<()> {
        if let Some(db) = self.actor.open_db() {
            match db.meta_set(META_ALARM, None) {
                // The index entry stays until it fires: it wakes nothing once the alarm is gone.
                Ok(()) => self.alarm = None,
                Err(e) => tracing::error!(actor = %self.key, "clear-alarm: {e}"),
            }
        }
        Ok(())
    }
}
