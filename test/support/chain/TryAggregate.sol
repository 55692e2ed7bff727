// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The one Multicall3 function the x402 facilitator reads through (tryAggregate), placed at the
/// canonical Multicall3 address of the local chain so a refused payment is diagnosed precisely.
contract TryAggregate {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory returnData) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(success, "TryAggregate: call failed");
            results[i] = Result(success, returnData);
        }
    }
}
