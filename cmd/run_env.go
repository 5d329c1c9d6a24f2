package cmd

// unsetEnv names the variables of schedlock's environment that COMMAND
// does not inherit: the DSN variables ($SCHEDLOCK_DSN,
// $SCHEDLOCK_DSN_FILE, $DATABASE_URL), which may hold a password, unless
// --keep-env asks to pass them on.
func (o *RunOptions) unsetEnv() []string {
	if o.KeepEnv {
		return nil
	}
	return DSNVariables
}
