/*
 * request.h - helpers on plan requests shared by the planners that run
 * other planners (auto, remat_plan_lowest()).  Internal to libremat.
 */
#ifndef REMAT_PLAN_REQUEST_H
#define REMAT_PLAN_REQUEST_H

#include "remat/planner.h"

/*
 * Point sub's options at a copy of them with key=value added last (so it
 * wins, remat_opt_get() reading the last occurrence).  *kv is that copy,
 * for the caller to free; value must outlive sub.
 */
int remat_i_request_with_option(struct remat_plan_request *sub, const char *key,
				const char *value, struct remat_kv **kv, struct remat_error *err);

/*
 * req, or, when only its time_limit is set (deadline 0), *tmp: a copy
 * whose deadline is time_limit from now (an outside review: a library
 * caller setting time_limit alone got runs of minutes).
 */
const struct remat_plan_request *remat_i_request_timed(const struct remat_plan_request *req,
							struct remat_plan_request *tmp);

#endif
