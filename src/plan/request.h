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

#endif
